package conformance_test

import (
	"context"
	"os"
	"path/filepath"
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

// TestCertify certifies a provider and writes
// <report dir>/TestCertify/certification.json. With IDEMCHECK_PROVIDER an
// http(s) URL it certifies that provider (IDEMCHECK_DIALECT,
// IDEMCHECK_API_KEY, IDEMCHECK_API_KEY_2, IDEMCHECK_PROFILE and the
// IDEMCHECK_MAX_* budgets apply) and fails on any FAIL verdict. Otherwise
// it serves cmd/refprovider's handler in process on a loopback port and
// certifies that: every requirement must PASS, or be INCONCLUSIVE where
// the profile (a 24 h window) or the setup (no second key) rules it out.
func TestCertify(t *testing.T) {
	cfg, err := remote.FromEnv()
	require.NoError(t, err)
	inProcess := cfg.BaseURL == ""
	if inProcess {
		h, err := server.Handler("", 0, 50*time.Millisecond)
		require.NoError(t, err)
		s, err := server.Start(h)
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		cfg.BaseURL = s.URL
	}
	if cfg.Limits.MaxDuration == 0 {
		cfg.Limits.MaxDuration = remote.DefaultMaxDuration
	}
	ctx, cancel := context.WithTimeout(t.Context(), cfg.Limits.MaxDuration+time.Minute)
	defer cancel()
	cert, err := certify.Certify(ctx, cfg, certify.Options{})
	require.NoError(t, err)
	dir := os.Getenv("IDEMCHECK_REPORT_DIR")
	if dir == "" {
		dir = conformance.DefaultReportDir
	}
	path, err := certify.WriteJSON(filepath.Join(dir, t.Name()), cert)
	require.NoError(t, err)
	for _, r := range cert.Requirements {
		t.Logf("%-36s %-12s [%s] %s", r.ID, r.Verdict, r.Against, r.Reason)
	}
	for _, b := range cert.Budgets {
		t.Logf("budget %-8s %s of %s", b.Name, b.Used, b.Limit)
	}
	t.Logf("report: %s", path)
	for _, r := range cert.Requirements {
		switch {
		case r.Verdict == reports.Fail:
			t.Errorf("%s: FAIL: %s (evidence in %s)", r.ID, r.Reason, path)
		case inProcess && r.Verdict == reports.Inconclusive && r.ID != certify.ReqRetention && r.ID != certify.ReqCrossAccount:
			t.Errorf("%s: INCONCLUSIVE against the in-process reference provider: %s", r.ID, r.Reason)
		}
	}
	assert.Len(t, cert.Requirements, len(certify.Requirements()))
}
