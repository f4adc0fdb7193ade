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
//	0  every verdict PASS, KNOWN (a deviation or requirement the baseline
//	   lists), NOT OFFERED (a MAY the provider does not offer) or NOT JUDGED
//	   (ruled out by the setup), with at least one PASS or KNOWN
//	1  a verdict FAIL
//	2  usage error, or a refused configuration (a live-looking key such as
//	   sk_live_ or pk_live_ in any case, a production profile): nothing sent
//	3  INCONCLUSIVE: a budget ran out, a requirement could not be decided,
//	   an invariant the run never exercised (held vacuously: raise --checks),
//	   or the run was interrupted; a line per INCONCLUSIVE verdict says why
//
// These are certify's; each verb's -h prints its own. A usage error
// prints one line and a pointer to 'idemcheck help VERB', and exits 2.
// Every input (flags, IDEMCHECK_* and RAPID_* variables, the profile, the
// baseline, the report folder, which is written to first) is checked
// before the first request; a refusal is one line naming the flag or
// variable given, exit 2.
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
	"slices"
	"strings"
	"sync/atomic"
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
	about, exits    string // its help text and exit codes, as -h prints them
	run             func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

var verbs []verb

func init() {
	verbs = []verb{
		{"certify", "[flags] URL", "certify the provider at URL: the requirement list, then the property; write a certification page", certifyAbout, certifyExits, certifyMain},
		{"run", "[flags]", "run the conformance property against the embedded provider (virtual time) or WireMock", runAbout, runExits, runMain},
		{"serve", "[flags]", "serve the reference provider, or provider mutants, on a loopback address until SIGINT or SIGTERM", serveAbout, serveExits, serveMain},
		{"replay", "[flags] FAILFILE", "replay a rapid fail file once against the provider it failed on, with no new search", replayAbout, replayExits, replayMain},
		{"merge", "[-o OUT] DIR...", "fold the run folders of several runs (a sharded run's shards) into one index, summary and JUnit file", mergeAbout, mergeExits, mergeMain},
	}
}

func main() {
	os.Exit(mainCode(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// mainCode dispatches args to their verb and returns the exit code.
func mainCode(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "idemcheck: want a verb: certify, run, serve, replay or merge")
		fmt.Fprintln(stderr, "run 'idemcheck help' for the verbs")
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
			if err := rapidInput(); err != nil && !slices.Contains(rest, "-h") {
				fmt.Fprintf(stderr, "idemcheck %s: refused, nothing sent: %v\n", name, err)
				return exitUsage
			}
			return v.run(ctx, rest, stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "idemcheck: unknown verb %q\n", name)
	fmt.Fprintln(stderr, "run 'idemcheck help' for the verbs")
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprint(w, "idemcheck certifies a payment provider's Idempotency-Key behaviour.\n\nUsage:\n\n")
	for _, v := range verbs {
		fmt.Fprintf(w, "\tidemcheck %s %s\n\t\t%s\n", v.name, v.args, v.doc)
	}
	fmt.Fprint(w, "\nRun 'idemcheck help VERB' (or 'idemcheck VERB -h') for a verb's flags and exit codes.\n")
	fmt.Fprint(w, certifyExits)
}

// The exit codes of each verb, as its -h prints them.
const (
	certifyExits = `
Exit codes:
	0  every verdict PASS, KNOWN (a deviation or requirement the baseline
	   lists), NOT OFFERED (a MAY the provider does not offer) or NOT JUDGED
	   (ruled out by the setup), with at least one PASS or KNOWN
	1  a verdict FAIL
	2  usage error, or a refused configuration (a live-looking key such as
	   sk_live_ or pk_live_ in any case, a production profile): nothing sent
	3  INCONCLUSIVE: a budget ran out, a requirement could not be decided, an
	   invariant the run never exercised (held vacuously: raise --checks), or
	   the run was interrupted; a line per INCONCLUSIVE verdict says why
`
	runExits = `
Exit codes:
	0  the property held
	1  the property failed (its report is named above the index)
	2  usage error, or a mutant or provider it refuses: nothing run
	3  the run was interrupted (SIGINT, SIGTERM)
`
	serveExits = `
Exit codes:
	0  stopped by SIGINT or SIGTERM
	2  usage error, an unknown mutant, or an address it cannot listen on
`
	replayExits = `
Exit codes:
	0  the failure did not come back
	1  the failure came back
	2  usage error, FAILFILE is not a rapid fail file, or a -provider that is
	   not embedded, wiremock or an http(s) URL: nothing run
	3  the fail file replayed no sequence, or the replay was interrupted
`
	mergeExits = `
Exit codes:
	0  every part passed
	1  a part failed
	2  usage error, or a folder holds no run
	3  a part was INCONCLUSIVE
`
)

// newFlags is a verb's flag set. Its Usage prints nothing: parse prints
// the verb's help (usage, about, flags, exit codes) for -h, and one line
// pointing to it for a usage error.
func newFlags(v string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("idemcheck "+v, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	return fs
}

// help prints the help of the verb whose flag set is fs to w: its usage
// line, about, flags and exit codes, once each.
func help(w io.Writer, fs *flag.FlagSet) {
	v := strings.TrimPrefix(fs.Name(), "idemcheck ")
	for _, vb := range verbs {
		if vb.name != v {
			continue
		}
		fmt.Fprintf(w, "Usage: idemcheck %s %s\n\n%s\n\nFlags:\n", vb.name, vb.args, strings.TrimSpace(vb.about))
		out := fs.Output()
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(out)
		fmt.Fprint(w, vb.exits)
	}
}

// usageError prints msg (unless empty: the flag package said it already)
// and a pointer to the verb's help on stderr, and returns exitUsage.
func usageError(stderr io.Writer, fs *flag.FlagSet, msg string) int {
	if msg != "" {
		fmt.Fprintf(stderr, "%s: %s\n", fs.Name(), msg)
	}
	fmt.Fprintf(stderr, "run 'idemcheck help %s' for its flags and exit codes\n", strings.TrimPrefix(fs.Name(), "idemcheck "))
	return exitUsage
}

// parse parses args with fs, flags before or after the positional
// arguments, and returns those; -h prints the verb's help to stdout (exit
// 0), a bad flag one line and a pointer to the help (exit 2). ok is false
// with the exit code to return.
func parse(fs *flag.FlagSet, args []string, stdout io.Writer) (pos []string, code int, ok bool) {
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			help(stdout, fs)
			return nil, exitPass, false
		}
		if err != nil {
			return nil, usageError(fs.Output(), fs, ""), false
		}
		if fs.NArg() == 0 {
			return pos, 0, true
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// onSignal returns a channel closed at the first SIGINT or SIGTERM, after
// saying so on stderr, and what names that signal ("SIGINT"; "" before
// it); a second signal exits at once with code 3. With atOnce the first
// signal exits at once with code 3 (run and replay: the embedded
// provider's run has no budget to end; reports already written stay).
func onSignal(stderr io.Writer, atOnce bool) (stop <-chan struct{}, cause func() string, release func()) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	ch := make(chan struct{})
	done := make(chan struct{})
	var name atomic.Value // string
	go func() {
		select {
		case s := <-sigs:
			if atOnce {
				fmt.Fprintf(stderr, "idemcheck: %s: stopped; the reports written so far stay\n", s)
				os.Exit(exitInconclusive)
			}
			name.Store(signalName(s))
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
	cause = func() string {
		n, _ := name.Load().(string)
		return n
	}
	return ch, cause, func() { signal.Stop(sigs); close(done) }
}

// signalName is s as a reason names it: "SIGINT", "SIGTERM".
func signalName(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}
