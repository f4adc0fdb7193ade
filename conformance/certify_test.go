package conformance_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/conformance"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/provider/server"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// inProcessLimits are the budgets against the in-process reference
// provider: room for the requirements and the rapid property's 100
// sequences.
var inProcessLimits = remote.Limits{MaxRequests: 50000, MaxCharges: 20000, MaxDuration: 8 * time.Minute}

// TestCertify certifies a provider: the fixed requirement list, then the
// rapid property with the reference client against it. It writes a run
// folder under the report directory (certification.md, .json, .junit.xml,
// run.json), updates index.md, appends the page to GITHUB_STEP_SUMMARY
// when set, and prints one line per requirement as it completes.
//
// With IDEMCHECK_PROVIDER an http(s) URL it certifies that provider
// (IDEMCHECK_DIALECT, IDEMCHECK_API_KEY, IDEMCHECK_API_KEY_2,
// IDEMCHECK_PROFILE and the IDEMCHECK_MAX_* budgets apply) and fails on
// any FAIL verdict. Otherwise it serves cmd/refprovider's handler in
// process on a loopback port and certifies that: every requirement must
// PASS, or be INCONCLUSIVE where the profile (a 24 h window) or the setup
// (no second key) rules it out, and the property must pass.
func TestCertify(t *testing.T) {
	t.Parallel() // it mostly waits (real time, a build): beside another such test
	cfg, err := remote.FromEnv()
	require.NoError(t, err)
	inProcess := cfg.BaseURL == ""
	scale := 0.0 // the default against a URL
	if inProcess {
		h := refProviderHandler(t)
		s, err := server.Start(h)
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		cfg.BaseURL, cfg.Limits, scale = s.URL, inProcessLimits, conformance.DefaultTimeScale
		if cfg.ProfilePath == "" {
			// refprovider publishes profiles/reference.json (what
			// ReferenceProfile says; TestShippedProfiles); a URL
			// without a profile is judged against the draft alone.
			cfg.Profile = remote.ReferenceProfile()
		}
	}
	p, err := remote.New(cfg) // refuses a live-looking key before any request
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), p.Config().Limits.MaxDuration+time.Minute)
	defer cancel()
	progress := reports.NewProgress(logWriter{t}, len(certify.Requirements()), 10)
	cert, err := certify.Run(ctx, p, certify.Options{Progress: func(r reports.RequirementResult) { _ = progress.Requirement(r) }})
	if errors.Is(err, certify.ErrDialect) || errors.Is(err, certify.ErrUnreachable) {
		// Not the provider, not its dialect, or nothing listening: the
		// page says so, and the property is not run against it.
		paths, werr := reports.WriteCertificationRun(reportDir(), cert)
		require.NoError(t, werr)
		t.Fatalf("could not certify: %v\ncertification: %s (%s)", err, conformance.FromRoot(paths.Markdown), cert.Overall())
	}
	require.NoError(t, err)

	// The property with the reference client (or the client mutant, time
	// scale and limits the environment selects) against the provider.
	pcfg, err := conformance.FromEnv()
	require.NoError(t, err)
	pcfg.Provider, pcfg.Remote, pcfg.ReportDir = p.BaseURL(), p, reportDir()
	pcfg.ProviderStore = "" // the store is the served provider's business
	if scale != 0 && os.Getenv("IDEMCHECK_TIME_SCALE") == "" {
		pcfg.TimeScale = scale
	}
	pcfg.OnSequence = func() { _ = progress.Sequence() }
	stats, property := conformance.RunStats(t, "property", pcfg)
	cert.Invariants, cert.Coverage, cert.Deviations = stats.Results(), stats.Coverage(), stats.Deviations()
	cert.Finished, cert.Budgets = time.Now().UTC(), p.Meter().Budgets()
	_ = progress.Done()

	paths, err := reports.WriteCertificationRun(reportDir(), cert)
	require.NoError(t, err)
	for _, r := range cert.Requirements {
		t.Logf("%-36s %-12s [%s] %s", r.ID, r.Verdict, r.Against, r.Reason)
	}
	for _, b := range cert.Budgets {
		t.Logf("budget %-8s %s of %s", b.Name, b.Used, b.Limit)
	}
	t.Logf("certification: %s (%s)\njunit: %s", conformance.FromRoot(paths.Markdown), cert.Overall(), conformance.FromRoot(paths.JUnit))
	for _, r := range cert.Requirements {
		switch {
		case r.Verdict == reports.Fail:
			t.Errorf("%s: FAIL: %s (evidence in %s)", r.ID, r.Reason, conformance.FromRoot(paths.Markdown))
		case inProcess && r.Verdict == reports.Inconclusive && r.ID != certify.ReqRetention && r.ID != certify.ReqCrossAccount:
			t.Errorf("%s: INCONCLUSIVE against the in-process reference provider: %s", r.ID, r.Reason)
		}
	}
	if inProcess {
		assert.True(t, property, "the rapid property must pass against the in-process reference provider")
		assert.Positive(t, cert.Coverage.Sequences, "the property ran sequences against the remote path")
	}
	assert.Len(t, cert.Requirements, len(certify.Requirements()))
}

// reportDir is IDEMCHECK_REPORT_DIR, or the default.
func reportDir() string {
	if dir := os.Getenv("IDEMCHECK_REPORT_DIR"); dir != "" {
		return dir
	}
	return conformance.DefaultReportDir
}

// logWriter writes each line to t.Log, so progress shows as it happens
// under -v.
type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p[:len(p)-1]))
	return len(p), nil
}
