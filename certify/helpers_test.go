package certify_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/provider/server"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// runBound is the most real time one certification run in these tests may
// take; the duration budget is set to it, so a run cannot hang past it.
const runBound = 2 * time.Minute

// startRef serves refprovider's handler (the reference provider, or the
// provider mutant named) on a loopback port and returns its base URL.
func startRef(t *testing.T, mutant string, retention, processing time.Duration) string {
	t.Helper()
	h, err := server.Handler(mutant, retention, processing)
	require.NoError(t, err)
	s, err := server.Start(h)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s.URL
}

// certifyURL certifies the provider at url with profile (the reference
// profile when zero) and the test key.
func certifyURL(t *testing.T, url string, prof remote.Profile, opts certify.Options) reports.Certification {
	t.Helper()
	cert, err := certifyURLErr(t, url, prof, opts)
	require.NoError(t, err)
	return cert
}

// certifyURLErr is certifyURL returning Run's error.
func certifyURLErr(t *testing.T, url string, prof remote.Profile, opts certify.Options) (reports.Certification, error) {
	t.Helper()
	if prof.Name == "" {
		prof = remote.ReferenceProfile()
	}
	ctx, cancel := context.WithTimeout(t.Context(), runBound+30*time.Second)
	defer cancel()
	return certify.Certify(ctx, remote.Config{BaseURL: url, APIKey: testKey, Profile: prof, Limits: remote.Limits{MaxDuration: runBound}}, opts)
}

// testKey is a sandbox-looking key; no artefact may contain it.
const testKey remote.APIKey = "sk_test_idemcheckSECRETkey0123456789"

// verdicts maps requirement id to verdict, and logs the table.
func verdicts(t *testing.T, cert reports.Certification) map[string]reports.Verdict {
	t.Helper()
	out := map[string]reports.Verdict{}
	for _, r := range cert.Requirements {
		out[r.ID] = r.Verdict
		t.Logf("%-36s %-12s %s", r.ID, r.Verdict, r.Reason)
	}
	for _, b := range cert.Budgets {
		t.Logf("budget %s: %s of %s", b.Name, b.Used, b.Limit)
	}
	return out
}

// postsIn counts the creates among exs.
func postsIn(exs []models.Exchange) int {
	n := 0
	for _, e := range exs {
		if e.IsPost() {
			n++
		}
	}
	return n
}
