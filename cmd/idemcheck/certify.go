package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/conformance"
	"github.com/idemcheck/idemcheck/internal/gotest"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/remote"
)

const certifyAbout = `Certify the provider at URL (http(s)://host[:port][/path]; requests go to URL/v1/charges):
the fixed requirement list (docs/profiles.md), then the conformance property with the
reference client against it, within the budgets. The run folder (certification.md, .json,
.junit.xml, run.json, report.html) is written under -report-dir and its page's path printed at the end.
A flag left unset takes its IDEMCHECK_* variable, else the default shown. The second
account's key, for the cross-account requirement, is IDEMCHECK_API_KEY_2.`

// certifyMain is idemcheck certify.
func certifyMain(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("certify", stderr)
	var p conformance.Provider
	fs.StringVar(&p.Dialect, "dialect", "", "`dialect` of the provider: reference or stripe (IDEMCHECK_DIALECT, else the profile's, else reference)")
	fs.StringVar(&p.Profile, "profile", "", "provider profile `file` (profiles/*.json; IDEMCHECK_PROFILE, else none: judged against the IETF draft alone)")
	fs.StringVar(&p.APIKeyEnv, "api-key-env", "IDEMCHECK_API_KEY", "environment `variable` holding the API key (never a key on the command line); a live-looking key is refused")
	fs.IntVar(&p.Budgets.Requests, "budget-requests", 0, "most HTTP `requests` to send (IDEMCHECK_MAX_REQUESTS, else 20000)")
	fs.IntVar(&p.Budgets.Charges, "budget-charges", 0, "most create requests (POST /v1/charges, each may charge) to send (IDEMCHECK_MAX_CHARGES, else 10000)")
	fs.DurationVar(&p.Budgets.Duration, "budget-duration", 0, "longest wall-clock `duration` of the run (IDEMCHECK_MAX_DURATION, else 30m)")
	fs.IntVar(&p.Concurrency, "concurrency", 0, "property `sequences` in flight at once, within the same budgets (IDEMCHECK_CONCURRENCY, else 4); each adds requests a second against a sandbox's rate limit: docs/profiles.md")
	fs.IntVar(&p.Checks, "checks", 0, "`sequences` the property draws (RAPID_CHECKS, else 100)")
	fs.Uint64Var(&p.Seed, "seed", 0, "the property's `seed` (RAPID_SEED, else random; the run prints the seed it used)")
	fs.StringVar(&p.ReportDir, "report-dir", "", "`folder` of the run folders and index.md (IDEMCHECK_REPORT_DIR, else ./idemcheck-reports)")
	fs.StringVar(&p.Baseline, "baseline", "", "baseline `file`: deviations (categories, invariant names) and requirement ids it lists are KNOWN, not FAIL (IDEMCHECK_BASELINE, else none)")
	fs.StringVar(&p.Hooks.Restart, "hook-restart", "", "`command` that restarts the provider, run as an argv without a shell (IDEMCHECK_HOOK_RESTART, else the profile's lifecycle.hooks.restart, else none: the restart requirements are NOT JUDGED); docs/providers.md")
	fs.StringVar(&p.Hooks.StoreDown, "hook-store-down", "", "`command` that takes the provider's idempotency store down (IDEMCHECK_HOOK_STORE_DOWN, else the profile's lifecycle.hooks.store_down)")
	fs.StringVar(&p.Hooks.StoreUp, "hook-store-up", "", "`command` that brings the store back with what it held (IDEMCHECK_HOOK_STORE_UP, else the profile's lifecycle.hooks.store_up)")
	fs.Var((*spanFlag)(&p.Hooks.Timeout), "hook-timeout", "longest `duration` of one hook; then its process group is killed and the requirement is INCONCLUSIVE (IDEMCHECK_HOOK_TIMEOUT, else the profile's, else 60s)")
	verbose := fs.Bool("v", false, "print the harness's own log (go test -v's: rapid's draws included) here, not only progress and a failure summary (else a failing run keeps it in its run folder as "+logFile+")")
	pos, code, ok := parse(fs, args, stdout)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return usageError(stderr, fs, "want one URL")
	}
	p.URL, p.Progress = pos[0], stderr
	if err := certifyInputs(fs, &p); err != nil {
		fmt.Fprintf(stderr, "idemcheck certify: refused, nothing sent: %v\n", err)
		return exitUsage
	}
	var err error
	if p.Seed, err = runSeed(p.Seed); err != nil {
		fmt.Fprintln(stderr, "idemcheck certify:", err)
		return exitUsage
	}
	fmt.Fprintf(stderr, "idemcheck: seed %d (repeat this run with -seed %d)\n", p.Seed, p.Seed)
	stop, cause, release := onSignal(stderr, false)
	defer release()
	p.Stop, p.StopCause = stop, cause
	log, err := newTestLog(*verbose)
	if err != nil {
		fmt.Fprintln(stderr, "idemcheck certify:", err)
		return exitUsage
	}
	var res conformance.Result
	failed, err := gotest.Run("idemcheck", testFlags(*verbose), log.out(), func(t *testing.T) { res = conformance.CertifyProvider(t, p) })
	if err == nil && res.Paths.Dir != "" {
		printDeviations(stderr, filepath.Dir(res.Paths.Dir), res.Deviations)
	}
	log.keep(res.Paths.Dir, failed, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "idemcheck certify:", err)
		return exitUsage
	}
	if res.Paths.Markdown == "" {
		fmt.Fprintln(stderr, "idemcheck certify: the run could not start (see above); nothing was certified")
		return exitUsage
	}
	v := res.Overall()
	if v == reports.Inconclusive {
		if why, ok := oneCause(res.Requirements, res.Invariants); ok {
			// Unreachable, or not the dialect: one cause, said once.
			fmt.Fprintf(stderr, "idemcheck: INCONCLUSIVE, all %d requirements, nothing else judged: %s\n", len(res.Requirements), why)
		} else {
			printInconclusive(stderr, res.Requirements, res.Invariants)
		}
	}
	verdictLine(stderr, v, res.Counts(), res.Paths.Markdown)
	fmt.Fprintln(stdout, res.Paths.Markdown)
	return verdictCode(v, stop)
}

// spanFlag is a remote.Span flag: a positive Go duration.
type spanFlag remote.Span

func (f *spanFlag) String() string {
	if f == nil || *f == 0 {
		return ""
	}
	return time.Duration(*f).String()
}

func (f *spanFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return fmt.Errorf("%q is not a positive Go duration", s)
	}
	*f = spanFlag(d)
	return nil
}

// verdictCode is the exit code of verdict v; an interrupted run is at best
// INCONCLUSIVE.
func verdictCode(v reports.Verdict, stop <-chan struct{}) int {
	select {
	case <-stop:
		if v != reports.Fail {
			return exitInconclusive
		}
	default:
	}
	switch v {
	case reports.Pass, reports.Known:
		return exitPass
	case reports.Fail:
		return exitFail
	}
	return exitInconclusive
}

// testFlags are the testing flags of a run: -test.v with -v.
func testFlags(verbose bool) []string {
	if verbose {
		return []string{"-test.v=true"}
	}
	return nil
}

// runSeed is the property's seed: seed when set, else RAPID_SEED, else a
// random one, so that the run can print it and be repeated with -seed.
func runSeed(seed uint64) (uint64, error) {
	if seed != 0 {
		return seed, nil
	}
	if v := os.Getenv("RAPID_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("RAPID_SEED=%q is not a seed (an unsigned integer)", v)
		}
		if n != 0 {
			return n, nil
		}
	}
	for seed == 0 {
		seed = rand.Uint64()
	}
	return seed, nil
}
