package conformance_test

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/sut/provider"
	"github.com/idemcheck/idemcheck/sut/provider/server"
)

// TestPropertyAgainstAProviderRefusingEveryCreate: a provider that
// answers every create 404 (a wrong path) gives the property nothing to
// judge reconciliation by: paying an abandoned order again is refused as
// every create is, which is no verdict on convergence (the run is
// INCONCLUSIVE, as the requirements are), never a FAIL of
// reconciliation-converges. Regression (issue 11, breaker): it failed
// "order 1 was abandoned but paying it again answered …".
func TestPropertyAgainstAProviderRefusingEveryCreate(t *testing.T) {
	t.Parallel() // it mostly waits (real time, a build): beside another such test
	prov := provider.New(provider.Config{})
	s, err := server.Start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"type":"about:blank","title":"Not Found","status":` + strconv.Itoa(http.StatusNotFound) + `}`))
			return
		}
		prov.ServeHTTP(w, r) // find-by-reference answers, in the dialect
	}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	out, _, _ := runConformance(t, "1", "IDEMCHECK_PROVIDER="+s.URL, "IDEMCHECK_MUTANT=", "IDEMCHECK_TIME_SCALE=0.0667",
		"IDEMCHECK_MAX_REQUESTS=3000", "IDEMCHECK_MAX_CHARGES=2000", "RAPID_CHECKS=30", "RAPID_SHRINKTIME=5s", "IDEMCHECK_MAX_DEVIATIONS=1")
	require.NotContains(t, out, "reconciliation-converges violated", out)
	require.Contains(t, out, "refused every create of paying an abandoned order again", "the run says why it did not judge: %s", out)
}
