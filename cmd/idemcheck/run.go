package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/idemcheck/idemcheck/conformance"
	"github.com/idemcheck/idemcheck/internal/gotest"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/mutants"
	"github.com/idemcheck/idemcheck/sut/remote"
)

const runAbout = `Run the conformance property (the state machine of docs/invariants.md: shopper and
operator actions under a fault schedule, invariants after every step) with the
reference client, against the embedded provider on virtual time or a WireMock
server in real time: what make conformance runs, without go test. A failure's
shrunk counterexample is written as a report under -report-dir, and the index's
path printed at the end. A flag left unset takes its IDEMCHECK_* variable.`

// runMain is idemcheck run.
func runMain(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("run", stderr)
	cfg := propertyFlags(fs, "embedded (virtual time) or wiremock (real time; IDEMCHECK_WIREMOCK_URL, else the jar npm ci installs)")
	checks := fs.Int("checks", 0, "`sequences` to draw (RAPID_CHECKS, else 100)")
	seed := fs.Uint64("seed", 0, "the property's `seed` (RAPID_SEED, else random; the run prints the seed it used)")
	pos, code, ok := parse(fs, args, stdout)
	if !ok {
		return code
	}
	if len(pos) != 0 {
		return usageError(stderr, fs, fmt.Sprintf("unexpected argument %q (certify a URL with idemcheck certify)", pos[0]))
	}
	if err := positiveFlags(fs, "checks"); err != nil {
		fmt.Fprintln(stderr, "idemcheck run:", err)
		return exitUsage
	}
	var targs []string
	if *checks > 0 {
		targs = append(targs, "-rapid.checks="+strconv.Itoa(*checks))
	}
	s, err := runSeed(*seed)
	if err != nil {
		fmt.Fprintln(stderr, "idemcheck run:", err)
		return exitUsage
	}
	fmt.Fprintf(stderr, "idemcheck: seed %d (repeat this run with -seed %d)\n", s, s)
	targs = append(targs, "-rapid.seed="+strconv.FormatUint(s, 10))
	return property("run", cfg, targs, stdout, stderr)
}

// noReplay is what idemcheck replay says of a fail file that replayed no
// sequence: rapid ignored the file (written by another rapid version), or
// its draws no longer fit (against a URL, the provider's state or timing
// took the run another way). Nothing was replayed, so nothing is known.
const noReplay = "idemcheck replay: the fail file replayed no sequence: rapid found it no longer valid (another rapid version, or the provider's state or timing took the run another way); run the certification again to search anew"

// propertyFlags are the flags run and replay share: the provider, the
// mutant and the report folder, over the environment's configuration.
func propertyFlags(fs *flag.FlagSet, providers string) *propertyConfig {
	var c propertyConfig
	fs.StringVar(&c.provider, "provider", "", "provider under test: "+providers+" (IDEMCHECK_PROVIDER, else embedded)")
	fs.StringVar(&c.mutant, "mutant", "", "plant the bug `NAME` of sut/mutants (IDEMCHECK_MUTANT, else none)")
	fs.StringVar(&c.reportDir, "report-dir", "", "`folder` of the reports and index.md (IDEMCHECK_REPORT_DIR, else ./idemcheck-reports)")
	fs.BoolVar(&c.verbose, "v", false, "print the harness's log (go test -v's: rapid's draws included) here, not only a failure summary (else a failing run keeps it in its run folder as "+logFile+")")
	return &c
}

type propertyConfig struct {
	provider, mutant, reportDir string
	verbose                     bool // -v
}

// property runs conformance.Run on the environment's configuration with
// c over it, under the testing flags targs (and -test.v with c.verbose),
// and returns the exit code: 1 when it failed.
func property(verb string, c *propertyConfig, targs []string, stdout, stderr io.Writer) int {
	code, _ := runProperty(verb, c, targs, stdout, stderr)
	return code
}

// runProperty is property, also returning the run's statistics (nil when
// it did not start).
func runProperty(verb string, c *propertyConfig, targs []string, stdout, stderr io.Writer) (code int, stats *conformance.Stats) {
	cfg, err := conformance.FromEnv()
	if err != nil {
		fmt.Fprintf(stderr, "idemcheck %s: %v\n", verb, err)
		return exitUsage, stats
	}
	if c.provider != "" {
		cfg.Provider = c.provider
	}
	if c.mutant != "" {
		cfg.Mutant = c.mutant
	}
	if c.reportDir != "" {
		cfg.ReportDir = c.reportDir
	}
	if err := providerInput(c.provider, cfg.Provider); err != nil {
		fmt.Fprintf(stderr, "idemcheck %s: %v\n", verb, err)
		return exitUsage, stats
	}
	if err := writableDir(reportDirInput(c.reportDir)); err != nil {
		fmt.Fprintf(stderr, "idemcheck %s: refused, nothing sent: %v\n", verb, err)
		return exitUsage, stats
	}
	if cfg.Mutant != "" {
		if _, err := mutants.Lookup(cfg.Mutant); err != nil {
			fmt.Fprintf(stderr, "idemcheck %s: %v\n", verb, err)
			return exitUsage, stats
		}
	}
	if remote.IsURL(cfg.Provider) && verb == "run" {
		fmt.Fprintf(stderr, "idemcheck run: the provider is a URL (%s): certify it with idemcheck certify\n", reports.RedactURL(cfg.Provider))
		return exitUsage, stats
	}
	if remote.IsURL(cfg.Provider) {
		if err := (conformance.Provider{URL: cfg.Provider}).Validate(); err != nil {
			fmt.Fprintf(stderr, "idemcheck %s: refused, nothing sent: %v\n", verb, err)
			return exitUsage, stats
		}
	}
	log, err := newTestLog(c.verbose)
	if err != nil {
		fmt.Fprintf(stderr, "idemcheck %s: %v\n", verb, err)
		return exitUsage, stats
	}
	stop, _, release := onSignal(stderr, true)
	defer release()
	cfg.OnStart = func(s *conformance.Stats) { stats = s } // also when the run fails: Run does not return then
	progress := reports.NewProgress(stderr, 0, 0)
	cfg.OnShrink = func(invariant string, steps int) { _ = progress.Shrink(invariant, steps, "") } // certify's lines
	failed, err := gotest.Run("idemcheck", append(targs, testFlags(c.verbose)...), log.out(), func(t *testing.T) { stats = conformance.Run(t, cfg) })
	folder := ""
	if stats != nil {
		folder = stats.RunFolder()
		printDeviations(stderr, cfg.ReportDir, stats.Deviations())
	}
	log.keep(folder, failed, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "idemcheck %s: %v\n", verb, err)
		return exitUsage, stats
	}
	index := filepath.Join(cfg.ReportDir, reports.IndexFile)
	fmt.Fprintln(stdout, index)
	if stats == nil {
		if !failed {
			fmt.Fprintf(stderr, "idemcheck %s: the run did not start\n", verb)
			return exitUsage, stats
		}
		return exitFail, stats // a run that could not start: why is above
	}
	v := reports.Pass
	switch {
	case failed: // a violation: its report is above
		v = reports.Fail
	case stats.Stopped() != "":
		printInconclusive(stderr, nil, stats.Results())
		v = reports.Inconclusive
	case verb == "replay" && stats.Sequences() == 0:
		fmt.Fprintln(stderr, noReplay)
		v = reports.Inconclusive
	}
	code = verdictCode(v, stop)
	if code == exitInconclusive {
		v = reports.Inconclusive
	}
	if verb == "replay" && v == reports.Pass {
		fmt.Fprintln(stderr, replayPassed(stats.Coverage().Steps, remote.IsURL(cfg.Provider) || cfg.Provider == "wiremock"))
	}
	verdictLine(stderr, v, propertyCounts(stats.Results(), stats.Deviations()), runReport(stats.RunFolder(), index))
	return code, stats
}

// replayPassed is what idemcheck replay says when the failure did not
// come back in the steps it ran: in real time (a URL, WireMock) the
// provider's answers may have taken the replay another way than the
// recorded sequence, so it says how to tell and how to measure it.
func replayPassed(steps int, realTime bool) string {
	s := fmt.Sprintf("idemcheck replay: the failure did not come back in the %d steps the replay ran", steps)
	if !realTime {
		return s + " (in virtual time a replay draws what the run did: the bug it showed is gone)"
	}
	return s + "; against a provider in real time its answers may take a replay another way than the recorded sequence: compare with the shopper steps of the failure's report, and IDEMCHECK_REPRODUCE=10 on the run that found it says how often it comes back"
}
