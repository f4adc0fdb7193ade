package certify_test

import (
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/provider/server"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// A provider that never answers 409 (it processes one request at a time,
// so the second of a pair waits and gets the replay) gives
// inflight-conflict-retry-after nothing to judge: NOT JUDGED when the
// profile publishes no slow trigger (a certification without --profile
// of a fast provider exited 3 on this INCONCLUSIVE), INCONCLUSIVE when
// the slow create was tried too. Never PASS.
func TestCertify_InflightHintWithoutA409(t *testing.T) {
	h, err := server.Handler("", 0, 0)
	require.NoError(t, err)
	var mu sync.Mutex
	s, err := server.Start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	only := certify.Options{Only: []string{certify.ReqInflightHint}}

	noSlow := remote.ReferenceProfile()
	noSlow.SlowTrigger = nil
	r := byID(certifyURL(t, s.URL, noSlow, only))[certify.ReqInflightHint]
	require.Equal(t, reports.NotJudged, r.Verdict, r.Reason)
	assert.Contains(t, r.Reason, "publishes no slow_trigger")

	withSlow := remote.ReferenceProfile()
	require.NotNil(t, withSlow.SlowTrigger)
	r = byID(certifyURL(t, s.URL, withSlow, only))[certify.ReqInflightHint]
	require.Equal(t, reports.Inconclusive, r.Verdict, r.Reason)
	assert.Contains(t, r.Reason, "no request was answered 409")
}
