package conformance_test

import (
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/conformance"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/provider/server"
)

// TestCertifyUnderAPathPrefix: a provider served under a path prefix — the
// reference provider behind a reverse proxy (net/http/httputil) that
// serves it at /api/ only — certifies PASS through the base URL
// http://127.0.0.1:PORT/api: the prefix stays a prefix for every request
// (the preflight, the requirements' creates, lookups and second-account
// probes, the property's client and probes), never doubled. Regression
// (issue 22, item 2): the preflight went to /api/api/v1/charges, and a
// correct provider "did not answer in the dialect".
func TestCertifyUnderAPathPrefix(t *testing.T) {
	backend, err := server.Start(refProviderHandler(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = backend.Close() })
	target, err := url.Parse(backend.URL)
	require.NoError(t, err)
	rp := httputil.NewSingleHostReverseProxy(target)
	var mu sync.Mutex
	outside := map[string]int{} // paths asked for outside /api/
	front, err := server.Start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, "/api/")
		if !ok || strings.HasPrefix(rest, "api/") {
			mu.Lock()
			outside[r.URL.Path]++
			mu.Unlock()
			http.NotFound(w, r)
			return
		}
		r.URL.Path, r.URL.RawPath = "/"+rest, ""
		rp.ServeHTTP(w, r)
	}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = front.Close() })

	cert := conformance.CertifyProvider(t, conformance.Provider{
		URL:          front.URL + "/api",
		Profile:      "../profiles/reference.json",
		APIKey:       "sk_test_idemcheck_merchant_a",
		SecondAPIKey: "sk_test_idemcheck_merchant_b",
		Budgets:      conformance.Budgets{Requests: inProcessLimits.MaxRequests, Charges: inProcessLimits.MaxCharges, Duration: inProcessLimits.MaxDuration},
		TimeScale:    conformance.DefaultTimeScale,
		ReportDir:    t.TempDir(),
		Progress:     testWriter{t},
	})
	mu.Lock()
	require.Empty(t, outside, "requests outside the prefix, or with it doubled")
	mu.Unlock()
	for _, r := range cert.Requirements {
		if r.Verdict != reports.Pass && r.Verdict != reports.NotJudged && r.Verdict != reports.NotOffered {
			t.Errorf("%s: %s: %s", r.ID, r.Verdict, r.Reason)
		}
	}
	require.Equal(t, reports.Pass, cert.Overall(), "the reference provider under a path prefix certifies PASS")
	require.Positive(t, cert.Coverage.Sequences)
}

// testWriter writes each progress line to t.Log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
