package certify_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// A provider whose lookup by reference lags (it lists nothing until lag
// has passed since its last create or refund) and whose profile
// publishes that lookup_lag is certified as the reference is: each
// lookup waits the lag out. Without the profile's lag the same provider
// is misjudged, which shows the lag is real. Regression (breaker): a
// correct provider lagging 20 s, its profile saying so, FAILed ten
// requirements on "lookup by merchant reference found 0 charges".
func TestCertify_LookupLagWaitedOut(t *testing.T) {
	t.Parallel() // it mostly waits (real time)
	// 1 s: without the profile's lag, one lookup of four requirements
	// within a second of their create is enough to misjudge, even on a
	// loaded runner; with it, each lookup waits 1.5 s after the last write
	// has ended, which is after its arrival here.
	const lag = time.Second
	var mu sync.Mutex
	var last time.Time
	url := wrapRef(t, func(w http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		defer mu.Unlock()
		if r.Method != http.MethodGet {
			last = time.Now() // on arrival; the handler answers within ms
			return false
		}
		if strings.Contains(r.URL.RawQuery, "merchant_reference=") && time.Since(last) < lag {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"data":[]}`))
			return true
		}
		return false
	})
	ids := []string{certify.ReqConcurrent, certify.ReqLostResponse, certify.ReqRetries, certify.ReqKeyedLookup}

	lagging := remote.ReferenceProfile()
	lagging.LookupLag = "1500ms"
	got := byID(certifyURL(t, url, lagging, certify.Options{Only: ids}))
	for _, id := range ids {
		assert.Equal(t, reports.Pass, got[id].Verdict, "%s: %s", id, got[id].Reason)
	}

	misjudged := 0
	got = byID(certifyURL(t, url, remote.ReferenceProfile(), certify.Options{Only: ids}))
	for _, id := range ids {
		if got[id].Verdict != reports.Pass {
			misjudged++
		}
	}
	assert.Positive(t, misjudged, "the provider does not lag: this test shows nothing")
}
