package backend

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/sut/provider"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// TestPreflightRidesOutATransientAnswer: a provider that answers the first
// find-by-reference 429 (or 503) with Retry-After is asked again and the
// run goes ahead; one that keeps answering 404 is refused after one
// lookup. Regression: a single 429 to the preflight stopped the property
// with "does not answer find-by-reference in the dialect".
func TestPreflightRidesOutATransientAnswer(t *testing.T) {
	for _, status := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		prov := provider.New(provider.Config{})
		var gets atomic.Int64
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if gets.Add(1) == 1 {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(status)
				return
			}
			prov.ServeHTTP(w, r)
		}))
		p, err := remote.New(remote.Config{BaseURL: s.URL, Limits: remote.Limits{MaxDuration: time.Minute}})
		require.NoError(t, err)
		require.NoError(t, Preflight(p), "status %d", status)
		require.EqualValues(t, 2, gets.Load())
		s.Close()
	}
	var gets atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gets.Add(1)
		http.NotFound(w, r)
	}))
	defer s.Close()
	p, err := remote.New(remote.Config{BaseURL: s.URL, Limits: remote.Limits{MaxDuration: time.Minute}})
	require.NoError(t, err)
	require.ErrorContains(t, Preflight(p), "IDEMCHECK_DIALECT")
	require.EqualValues(t, 1, gets.Load(), "a 404 is not asked again")
}
