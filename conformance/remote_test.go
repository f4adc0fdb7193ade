package conformance_test

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/provider/server"
)

// serveRefProvider serves cmd/refprovider's handler (the provider mutant
// named, or the reference for "") on a loopback port for the test, and
// counts the requests it gets.
func serveRefProvider(t *testing.T, mutant string) (url string, requests *atomic.Int64) {
	t.Helper()
	h, err := server.Handler(mutant, 0, 20*time.Millisecond)
	require.NoError(t, err)
	requests = new(atomic.Int64)
	s, err := server.Start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		h.ServeHTTP(w, r)
	}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s.URL, requests
}

// TestRemotePropertyCatchesAProviderMutant: the property run against a
// URL — cmd/refprovider serving the replay-new-charge mutant, a provider
// that charges again on every replay — fails on the books, with the
// provider's charges read back by merchant reference.
func TestRemotePropertyCatchesAProviderMutant(t *testing.T) {
	url, _ := serveRefProvider(t, "replay-new-charge")
	out, failed, dir := runConformance(t, "1", "IDEMCHECK_PROVIDER="+url, "IDEMCHECK_MUTANT=", "RAPID_CHECKS=100")
	require.True(t, failed, "a provider that charges on replay must fail the property; output:\n%s", out)
	raw, err := os.ReadFile(reportFile(dir, "", "failure.json"))
	require.NoError(t, err, out)
	var rep struct {
		Invariant string `json:"invariant"`
		Provider  string `json:"provider"`
	}
	require.NoError(t, json.Unmarshal(raw, &rep))
	require.Contains(t, []string{"at-most-one-charge-per-order", "books-balance"}, rep.Invariant, out)
	require.Equal(t, url, rep.Provider)
}

// TestRemotePropertyStopsAtItsBudget: with a budget of 40 requests the
// property never sends a 41st; it stops and says INCONCLUSIVE (the test is
// skipped with that reason) instead of judging half a sequence.
func TestRemotePropertyStopsAtItsBudget(t *testing.T) {
	url, requests := serveRefProvider(t, "")
	out, failed, dir := runConformance(t, "1", "IDEMCHECK_PROVIDER="+url, "IDEMCHECK_MUTANT=", "IDEMCHECK_MAX_REQUESTS=40", "IDEMCHECK_MAX_CHARGES=40")
	require.False(t, failed, out)
	require.Contains(t, out, "INCONCLUSIVE: the requests budget is spent")
	require.Contains(t, out, "--- SKIP: TestConformance")
	require.LessOrEqual(t, requests.Load(), int64(40), "the provider got more requests than the budget")
	require.Positive(t, requests.Load())
	index, err := os.ReadFile(filepath.Join(dir, "index.md"))
	require.NoError(t, err)
	require.Contains(t, string(index), "| property | INCONCLUSIVE |", "the run is recorded as INCONCLUSIVE, not PASS:\n%s", index)
}

// TestCertifyWithinATightBudget: a certification of a URL whose budget
// runs out in the property still writes its page: the requirements it
// afforded, and every invariant INCONCLUSIVE with the reason.
func TestCertifyWithinATightBudget(t *testing.T) {
	url, requests := serveRefProvider(t, "")
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCertify$", "-test.v")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "IDEMCHECK_PROVIDER="+url, "IDEMCHECK_MAX_REQUESTS=80", "IDEMCHECK_MAX_CHARGES=60",
		"IDEMCHECK_REPORT_DIR="+dir, "GITHUB_STEP_SUMMARY=", "IDEMCHECK_MUTANT=")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	pages, _ := filepath.Glob(filepath.Join(dir, "*", "certification.json"))
	require.Len(t, pages, 1, "%s", out)
	raw, err := os.ReadFile(pages[0])
	require.NoError(t, err)
	var cert reports.Certification
	require.NoError(t, json.Unmarshal(raw, &cert))
	require.NotEmpty(t, cert.Invariants)
	for _, inv := range cert.Invariants {
		require.Equal(t, reports.Inconclusive, inv.Verdict, "%s: %s", inv.Name, inv.Reason)
	}
	require.LessOrEqual(t, requests.Load(), int64(80))
}
