package certify_test

import (
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/provider/server"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// Each refunds mutant, served by refprovider's handler on loopback, fails
// the refunds requirement it breaks, with the exchanges that show it; the
// other refunds requirement still passes.
func TestCertify_RefundMutantsFailTheirRequirement(t *testing.T) {
	cases := []struct{ mutant, want, other string }{
		{"keys-shared-across-endpoints", certify.ReqEndpointScope, certify.ReqRefundReplay},
		{"refund-replays-charge", certify.ReqEndpointScope, certify.ReqRefundReplay},
		{"refund-not-idempotent", certify.ReqRefundReplay, certify.ReqEndpointScope},
	}
	for _, c := range cases {
		t.Run(c.mutant, func(t *testing.T) {
			t.Parallel()
			url := startRef(t, c.mutant, 0, 0)
			cert := certifyURL(t, url, remote.ReferenceProfile(), certify.Options{Only: []string{certify.ReqRefundReplay, certify.ReqEndpointScope}})
			v := verdicts(t, cert)
			require.Equal(t, reports.Fail, v[c.want], "requirement %s", c.want)
			assert.Equal(t, reports.Pass, v[c.other], "requirement %s", c.other)
			for _, r := range cert.Requirements {
				if r.ID == c.want {
					assert.NotEmpty(t, r.Reason)
					assert.NotEmpty(t, r.Evidence, "a FAIL carries its exchanges")
				}
			}
		})
	}
}

// A refund retried under its key and answered 429 (a busy provider, as
// docs/profiles.md has it: transient) is no verdict on the refunds
// endpoint's idempotency: INCONCLUSIVE, not FAIL. Regression: the retry's
// 429 read as "not the first refund", a FAIL and a cause of its own
// (found against a loopback proxy answering every fifth request 429).
func TestCertify_RefundRetryAnsweredBusyIsNoVerdict(t *testing.T) {
	h, err := server.Handler("", 0, 0)
	require.NoError(t, err)
	s, err := server.Start(secondTryBusy(h, "/v1/refunds"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	cert := certifyURL(t, s.URL, remote.ReferenceProfile(), certify.Options{Only: []string{certify.ReqRefundReplay}})
	assert.Equal(t, reports.Inconclusive, verdicts(t, cert)[certify.ReqRefundReplay])
}

// The same for a create: a replay answered 429 (the provider busy, not
// the key charged again) leaves replay-returns-first-response
// INCONCLUSIVE, with the 429 named (busyAnswer).
func TestCertify_ReplayAnsweredBusyIsNoVerdict(t *testing.T) {
	h, err := server.Handler("", 0, 0)
	require.NoError(t, err)
	s, err := server.Start(secondTryBusy(h, "/v1/charges"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	cert := certifyURL(t, s.URL, remote.ReferenceProfile(), certify.Options{Only: []string{certify.ReqReplay}})
	assert.Equal(t, reports.Inconclusive, verdicts(t, cert)[certify.ReqReplay])
	assert.Contains(t, cert.Requirements[0].Reason, "the provider answered 429")
}

// secondTryBusy is h answering the second POST to path under one key 429
// with Retry-After 1.
func secondTryBusy(h http.Handler, path string) http.Handler {
	var mu sync.Mutex
	seen := map[string]bool{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == path {
			k := r.Header.Get(models.IdempotencyKeyHeader)
			mu.Lock()
			again := seen[k]
			seen[k] = true
			mu.Unlock()
			if again {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}
