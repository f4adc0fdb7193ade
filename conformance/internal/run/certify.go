package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// Certification is what conformance.CertifyProvider runs (the field docs
// are conformance.Provider's): the remote provider's configuration, with
// the environment under the Provider's fields, and the run's settings.
type Certification struct {
	Remote      remote.Config
	Checks      int
	Seed        uint64
	ReportDir   string
	Baseline    string // a path
	TimeScale   float64
	Progress    io.Writer
	Stop        <-chan struct{}
	StopCause   func() string
	Concurrency int
}

// Certify is conformance.CertifyProvider: the requirements, then the
// property; it returns the page's content and the files written.
func Certify(t *testing.T, p Certification) (reports.Certification, reports.CertificationPaths) {
	t.Helper()
	prov, err := remote.New(p.Remote) // refuses a live-looking key before any request
	if err != nil {
		t.Fatal(err)
	}
	// The requirements' own waits (a Retry-After, a retention window) end
	// at the duration budget, or at once on Stop.
	ctx, cancel := context.WithTimeout(t.Context(), prov.Config().Limits.MaxDuration+time.Minute)
	defer cancel()
	if p.Stop != nil {
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-p.Stop:
				prov.Meter().Interrupt(interrupted(p.StopCause))
				cancel()
			case <-done:
			}
		}()
	}
	pcfg, err := FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if p.ReportDir != "" {
		pcfg.ReportDir = p.ReportDir
	}
	if p.Baseline != "" {
		if pcfg.Baseline, err = LoadBaseline(p.Baseline); err != nil {
			t.Fatal(err)
		}
	}
	if p.TimeScale != 0 {
		pcfg.TimeScale = p.TimeScale
	}
	if p.Concurrency > 0 {
		pcfg.Concurrency = p.Concurrency
	}
	p.Concurrency = pcfg.Concurrency // the lanes' seeds depend on it: the rerun line names it
	if err := writableReportDir(pcfg.ReportDir); err != nil {
		t.Fatal(err) // before the first request: a run that cannot keep its page sends nothing
	}
	restore := setRapidFlags(t, p.Checks, p.Seed)
	defer restore()

	var w = p.Progress
	if w == nil {
		w = logWriter{t}
	}
	progress := reports.NewProgress(w, len(certify.Requirements()), 0)
	progress.SetLeft(func() string {
		req, posts := prov.Meter().Used()
		l := prov.Config().Limits
		return fmt.Sprintf("%d requests and %d charges left", l.MaxRequests-req, l.MaxCharges-posts)
	})
	cert, err := certify.Run(ctx, prov, certify.Options{Progress: func(r reports.RequirementResult) { _ = progress.Requirement(pcfg.Baseline.requirement(r)) }})
	for i, r := range cert.Requirements {
		cert.Requirements[i] = pcfg.Baseline.requirement(r) // a requirement id the baseline lists: KNOWN, not FAIL
	}
	cert.Seed = rapidSeed() // set by setRapidFlags from p.Seed, else -rapid.seed
	if errors.Is(err, certify.ErrDialect) || errors.Is(err, certify.ErrUnreachable) || errors.Is(err, certify.ErrKeyForm) {
		// Not the provider, not its dialect, or no key form it accepts: the page says so, and the
		// property is not run against it.
		paths, werr := reports.WriteCertificationRun(pcfg.ReportDir, cert)
		if werr != nil {
			t.Fatal(werr)
		}
		t.Errorf("could not certify: %v\ncertification: %s (%s)", err, fromRoot(paths.Markdown), cert.Overall())
		return cert, paths
	}
	if err != nil {
		t.Fatal(err)
	}

	pcfg.Provider, pcfg.Remote = prov.BaseURL(), prov
	pcfg.ProviderStore = "" // the store is the served provider's business
	// What a requirement FAILed on is not shrunk again (shrinkcap.go).
	pcfg.Shown = ShownBy(cert.Requirements)
	pcfg.OnSequence = func() { _ = progress.Sequence() }
	pcfg.OnShrink = func(invariant string, steps int) {
		req, _ := prov.Meter().Used()
		_ = progress.Shrink(invariant, steps, fmt.Sprintf("%d requests spent", req))
	}
	pcfg.OnShrinkEnd = func(invariant string, steps int, why string) { _ = progress.ShrinkEnded(invariant, steps, why) }
	stats, _ := runStats(t, "property", pcfg)
	cert.Invariants, cert.Coverage, cert.Deviations = stats.Results(), stats.Coverage(), stats.Deviations()
	for i, inv := range cert.Invariants {
		cert.Invariants[i] = pcfg.Baseline.invariant(inv) // an INCONCLUSIVE one the baseline lists: ACKNOWLEDGED
	}
	cert.Hooks = append(cert.Hooks, prov.HookFaultRuns()...) // the property's restarts and store outages (For "property")
	cert.Finished, cert.Budgets = time.Now().UTC(), prov.Meter().Budgets()
	cert.Seed, cert.Rerun = p.Seed, rerunCommand(prov.Config(), p)
	certify.ExplainShown(&cert, pcfg.Shown) // the failures grouped into causes, worst first; what a cause leaves unjudgeable NOT JUDGED
	pcfg.Baseline.causes(&cert)             // a cause the baseline lists: what shows it KNOWN
	cert.BaselineUnused = pcfg.Baseline.unused(cert)
	for _, k := range cert.Causes {
		_ = progress.Explained(k.ID, k.Explains) // printed FAIL above: stderr and the page agree
	}
	_ = progress.Done()

	paths, err := reports.WriteCertificationRun(pcfg.ReportDir, cert)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range cert.Requirements {
		t.Logf("%-36s %-12s [%s] %s", r.ID, r.Verdict, r.Against, r.Reason)
		if r.Verdict == reports.Fail {
			t.Errorf("%s: FAIL: %s (evidence in %s)", r.ID, r.Reason, fromRoot(paths.Markdown))
		}
	}
	for _, b := range cert.Budgets {
		t.Logf("budget %-8s %s of %s", b.Name, b.Used, b.Limit)
	}
	t.Logf("certification: %s (%s)\njunit: %s", fromRoot(paths.Markdown), cert.Overall(), fromRoot(paths.JUnit))
	return cert, paths
}

// rerunCommand is the idemcheck certify line that runs certification p
// against the provider configured by c again with the same seed and the
// settings that change what is drawn and judged (profile, dialect,
// sequences, budgets away from their defaults); "" under go test, where
// the caller's test is what runs it, or without a seed.
func rerunCommand(c remote.Config, p Certification) string {
	if testing.Testing() || p.Seed == 0 {
		return ""
	}
	args := []string{"idemcheck", "certify"}
	if c.ProfilePath != "" {
		args = append(args, "-profile", c.ProfilePath)
	}
	if c.Dialect != "" && c.Dialect != remote.DialectReference {
		args = append(args, "-dialect", c.Dialect)
	}
	if p.Checks > 0 {
		args = append(args, "-checks", strconv.Itoa(p.Checks))
	}
	if p.Concurrency > 0 && p.Concurrency != DefaultConcurrency {
		args = append(args, "-concurrency", strconv.Itoa(p.Concurrency))
	}
	l := c.Limits
	if l.MaxRequests != remote.DefaultMaxRequests {
		args = append(args, "-budget-requests", strconv.Itoa(l.MaxRequests))
	}
	if l.MaxCharges != remote.DefaultMaxCharges {
		args = append(args, "-budget-charges", strconv.Itoa(l.MaxCharges))
	}
	if l.MaxDuration != remote.DefaultMaxDuration {
		args = append(args, "-budget-duration", l.MaxDuration.String())
	}
	for _, h := range []struct{ flag, cmd string }{{"-hook-restart", c.Hooks.Restart}, {"-hook-store-down", c.Hooks.StoreDown}, {"-hook-store-up", c.Hooks.StoreUp}} {
		if h.cmd != "" {
			args = append(args, h.flag, h.cmd)
		}
	}
	if c.Hooks.Timeout > 0 {
		args = append(args, "-hook-timeout", time.Duration(c.Hooks.Timeout).String())
	}
	args = append(args, "-seed", strconv.FormatUint(p.Seed, 10), reports.RedactURL(c.BaseURL))
	for i, a := range args {
		args[i] = shellWord(a)
	}
	return strings.Join(args, " ")
}

// interrupted is the reason a run stopped by Certification.Stop gives:
// "the run was interrupted", with what cause names in brackets.
func interrupted(cause func() string) string {
	why := "the run was interrupted"
	if cause != nil {
		if c := cause(); c != "" {
			why += " (" + c + ")"
		}
	}
	return why
}

// setRapidFlags sets -rapid.checks and -rapid.seed for one call when
// checks or seed is not zero, and returns what puts them back.
func setRapidFlags(t *testing.T, checks int, seed uint64) func() {
	set := map[string]string{}
	if checks > 0 {
		set["rapid.checks"] = strconv.Itoa(checks)
	}
	if seed != 0 {
		set["rapid.seed"] = strconv.FormatUint(seed, 10)
	}
	return setFlags(t, set) // logreplay.go
}

// logWriter writes each line to t.Log, so progress shows as it happens
// under -v.
type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	if n := len(p); n > 0 && p[n-1] == '\n' {
		w.t.Log(string(p[:n-1]))
	} else {
		w.t.Log(string(p))
	}
	return len(p), nil
}
