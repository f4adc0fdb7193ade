// Command idemcheck certifies a payment provider's Idempotency-Key
// behaviour, runs the conformance property, serves the reference provider
// and replays a failure, from the command line: the library API of package
// conformance (CertifyProvider, Run) outside go test.
//
// Usage:
//
//	idemcheck certify [flags] URL   certify the provider at URL; write a certification page
//	idemcheck run [flags]           the conformance property against the embedded provider or WireMock
//	idemcheck serve [flags]         serve the reference provider (or a provider mutant) on loopback
//	idemcheck replay [flags] FAILFILE
//	                                replay a rapid fail file once, with no new search
//	idemcheck merge [-o OUT] DIR... fold several runs' folders (shards) into one index, summary and JUnit file
//	idemcheck help [VERB]           this text, or a verb's flags
//
// Progress goes to stderr: a line per requirement verdict and a running
// count of sequences with the requests and charges left, then three lines
// a deviation found (invariant and shopper steps, report, replay line).
// Without -v the testing output of a failing run (rapid's draws, the
// harness's log) goes to rapid.log in its run folder, named on stderr;
// with -v it goes to stderr as it happens. The path of the
// certification page (certify) or the report folder (run, replay) is the
// one line on stdout, at the end. SIGINT or SIGTERM stops a run as if its
// duration budget ran out (certify): it writes what it judged
// (INCONCLUSIVE where unfinished) and exits 3; run and replay exit 3 at
// once, keeping the reports already written.
//
// Exit codes:
//
//	0  every verdict PASS (or KNOWN: a deviation or requirement the baseline lists)
//	1  a verdict FAIL
//	2  usage error, or a refused configuration (a live-looking key such as
//	   sk_live_ or pk_live_ in any case, a production profile): nothing sent
//	3  INCONCLUSIVE: a budget ran out, a requirement could not be decided,
//	   or the run was interrupted
//
// Install with go install github.com/idemcheck/idemcheck/cmd/idemcheck@latest.
// docs/cli.md has examples.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// The exit codes (see the package doc).
const (
	exitPass         = 0
	exitFail         = 1
	exitUsage        = 2
	exitInconclusive = 3
)

// verb is one subcommand.
type verb struct {
	name, args, doc string
	run             func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

var verbs []verb

func init() {
	verbs = []verb{
		{"certify", "[flags] URL", "certify the provider at URL: the requirement list, then the property; write a certification page", certifyMain},
		{"run", "[flags]", "run the conformance property against the embedded provider (virtual time) or WireMock", runMain},
		{"serve", "[flags]", "serve the reference provider, or provider mutants, on a loopback address until SIGINT or SIGTERM", serveMain},
		{"replay", "[flags] FAILFILE", "replay a rapid fail file once against the provider it failed on, with no new search", replayMain},
		{"merge", "[-o OUT] DIR...", "fold the run folders of several runs (a sharded run's shards) into one index, summary and JUnit file", mergeMain},
	}
}

func main() {
	os.Exit(mainCode(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// mainCode dispatches args to their verb and returns the exit code.
func mainCode(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	name, rest := args[0], args[1:]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(rest) == 0 {
			usage(stdout)
			return exitPass
		}
		name, rest = rest[0], []string{"-h"}
	}
	for _, v := range verbs {
		if v.name == name {
			return v.run(ctx, rest, stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "idemcheck: unknown verb %q\n\n", name)
	usage(stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprint(w, "idemcheck certifies a payment provider's Idempotency-Key behaviour.\n\nUsage:\n\n")
	for _, v := range verbs {
		fmt.Fprintf(w, "\tidemcheck %s %s\n\t\t%s\n", v.name, v.args, v.doc)
	}
	fmt.Fprint(w, "\nRun 'idemcheck help VERB' (or 'idemcheck VERB -h') for a verb's flags.\n")
	fmt.Fprint(w, exitCodes)
}

const exitCodes = `
Exit codes:
	0  every verdict PASS (or KNOWN: a deviation or requirement the baseline lists)
	1  a verdict FAIL
	2  usage error, or a refused configuration (a live-looking key such as
	   sk_live_ or pk_live_ in any case, a production profile): nothing sent
	3  INCONCLUSIVE: a budget ran out, a requirement could not be decided,
	   or the run was interrupted
`

// newFlags is a verb's flag set, whose -h prints the verb's usage, its
// flags and the exit codes.
func newFlags(v string, stderr io.Writer, about string) *flag.FlagSet {
	fs := flag.NewFlagSet("idemcheck "+v, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		for _, vb := range verbs {
			if vb.name == v {
				fmt.Fprintf(fs.Output(), "Usage: idemcheck %s %s\n\n%s\n\nFlags:\n", vb.name, vb.args, about)
			}
		}
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), exitCodes)
	}
	return fs
}

// parse parses args with fs, flags before or after the positional
// arguments, and returns those; -h prints the usage to stdout. ok is false
// with the exit code to return.
func parse(fs *flag.FlagSet, args []string, stdout io.Writer) (pos []string, code int, ok bool) {
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" || a == "--h" {
			fs.SetOutput(stdout) // asked for: the usage is the output
		}
	}
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			return nil, exitPass, false
		}
		if err != nil {
			return nil, exitUsage, false
		}
		if fs.NArg() == 0 {
			return pos, 0, true
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// onSignal returns a channel closed at the first SIGINT or SIGTERM, after
// saying so on stderr; a second signal exits at once with code 3. With
// atOnce the first signal exits at once with code 3 (run and replay: the
// embedded provider's run has no budget to end; reports already written
// stay).
func onSignal(stderr io.Writer, atOnce bool) (stop <-chan struct{}, release func()) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	ch := make(chan struct{})
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			if atOnce {
				fmt.Fprintf(stderr, "idemcheck: %s: stopped; the reports written so far stay\n", s)
				os.Exit(exitInconclusive)
			}
			fmt.Fprintf(stderr, "idemcheck: %s: stopping; writing what was judged (again to quit at once)\n", s)
			close(ch)
		case <-done:
			return
		}
		select {
		case <-sigs:
			os.Exit(exitInconclusive)
		case <-done:
		}
	}()
	return ch, func() { signal.Stop(sigs); close(done) }
}
