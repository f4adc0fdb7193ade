package provider_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/sut/provider"
)

// A body that does not parse is 400, one longer than MaxBodyBytes 413
// (it was 400 before), both answered before the key store: the same key
// with a good body then charges.
func TestBadBodiesTakeNoKey(t *testing.T) {
	p := provider.New(provider.Config{})
	for i, c := range []struct {
		raw    string
		status int
	}{
		{`{"amount":1099,"currency":`, http.StatusBadRequest},
		{`{"description":"` + strings.Repeat("x", provider.MaxBodyBytes) + `"}`, http.StatusRequestEntityTooLarge},
	} {
		key := `"bad-body-` + string(rune('a'+i)) + `"`
		w := httptest.NewRecorder()
		p.ServeHTTP(w, newPost(key, c.raw))
		requireProblem(t, w, c.status)
		good := visa
		good.MerchantReference += string(rune('a' + i))
		decodeCharge(t, post(t, p, key, good))
	}
	assert.Len(t, p.Charges(), 2)
}

// The 409 for a key in flight carries Retry-After: 1; under the
// InflightNoRetryAfter bug it carries none.
func TestInFlightConflictCarriesRetryAfter(t *testing.T) {
	for _, planted := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			cfg := provider.Config{BeforeCommit: func(*http.Request) { time.Sleep(time.Second) }} // virtual
			cfg.Planted.InflightNoRetryAfter = planted
			p := provider.New(cfg)
			first := make(chan *httptest.ResponseRecorder, 1)
			go func() { first <- post(t, p, `"in-flight"`, visa) }()
			synctest.Wait() // the first is in BeforeCommit, its key in flight
			w := post(t, p, `"in-flight"`, visa)
			decodeCharge(t, <-first)
			requireProblem(t, w, http.StatusConflict)
			want := "1"
			if planted {
				want = ""
			}
			assert.Equal(t, want, w.Header().Get("Retry-After"), "planted %v", planted)
		})
	}
}

// SlowCard is processed for Config.SlowProcessing: a retry 1.5 s into
// 2 s gets 409 and one charge is made; under the LockLease bug (1 s) the
// retry is processed again and charges twice.
func TestSlowCardOutlastsTheLock(t *testing.T) {
	for _, lease := range []time.Duration{0, time.Second} {
		synctest.Test(t, func(t *testing.T) {
			cfg := provider.Config{SlowProcessing: 2 * time.Second}
			cfg.Planted.LockLease = lease
			p := provider.New(cfg)
			slow := visa
			slow.Source = provider.SlowCard
			first := make(chan *httptest.ResponseRecorder, 1)
			go func() { first <- post(t, p, `"slow"`, slow) }()
			time.Sleep(1500 * time.Millisecond) // virtual
			retry := post(t, p, `"slow"`, slow)
			decodeCharge(t, <-first)
			if lease == 0 {
				requireProblem(t, retry, http.StatusConflict)
				require.Len(t, p.Charges(), 1)
				return
			}
			decodeCharge(t, retry)
			require.Len(t, p.Charges(), 2, "a lease shorter than processing charges twice")
		})
	}
}
