package certify_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/provider"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// TestCertify_PreflightRidesOutATransientAnswer: a provider that is
// momentarily rate limited or unavailable (429 or 503 with Retry-After) on
// the very first lookup is still the provider, in its dialect: the
// preflight asks again after Retry-After and the run certifies it.
// Regression: one 429 to the preflight made every requirement
// INCONCLUSIVE with ErrDialect, "check IDEMCHECK_PROVIDER and
// IDEMCHECK_DIALECT".
func TestCertify_PreflightRidesOutATransientAnswer(t *testing.T) {
	for _, status := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			prov := provider.New(provider.Config{})
			var gets atomic.Int64
			s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet && gets.Add(1) == 1 {
					w.Header().Set("Retry-After", "1")
					w.WriteHeader(status)
					return
				}
				prov.ServeHTTP(w, r)
			}))
			t.Cleanup(s.Close)
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			cert, err := certify.Certify(ctx, remote.Config{BaseURL: s.URL, APIKey: testKey, Limits: remote.Limits{MaxDuration: time.Minute}},
				certify.Options{Only: []string{certify.ReqReplay}})
			require.NoError(t, err)
			assert.Equal(t, reports.Pass, cert.Requirements[0].Verdict, cert.Requirements[0].Reason)
		})
	}
}

// TestCertify_RequirementsCarryTheirTime: certify.Run sets each
// requirement's Seconds (the JUnit case time) when it ran, and leaves 0
// for one not selected. Regression guard: only the rendering of Seconds
// was tested, so Run could drop it unnoticed.
func TestCertify_RequirementsCarryTheirTime(t *testing.T) {
	prov := provider.New(provider.Config{})
	s := httptest.NewServer(prov)
	t.Cleanup(s.Close)
	cert := certifyURL(t, s.URL, remote.ReferenceProfile(), certify.Options{Only: []string{certify.ReqReplay}})
	for _, r := range cert.Requirements {
		if r.ID == certify.ReqReplay {
			assert.Positive(t, r.Seconds, "%s ran", r.ID)
			continue
		}
		assert.Zero(t, r.Seconds, "%s did not run", r.ID)
	}
}
