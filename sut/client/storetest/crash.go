package storetest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/client"
	"github.com/idemcheck/idemcheck/sut/provider"
)

// RunCrashPoints kills a client at each crash point of a checkout against
// the reference provider, restarts it over the same store, lets the
// shopper pay again, and checks that the order is charged once under one
// key. Each point runs in its own testing/synctest bubble; open is called
// inside it (a pool must be made and closed in its bubble).
func RunCrashPoints(t *testing.T, open func(t *testing.T) client.AttemptStore) {
	for _, p := range client.CheckoutPoints {
		t.Run(string(p), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { crashAt(t, open(t), p) })
		})
	}
}

func crashAt(t *testing.T, store client.AttemptStore, p client.Point) {
	prov := provider.New(provider.Config{})
	keys := &keyLog{}
	cfg := client.Config{BaseURL: "http://provider.test", HTTPClient: &http.Client{Transport: keys.wrap(prov)}}
	var victim *client.Client
	var once sync.Once
	crashCfg := cfg
	crashCfg.At = func(_ context.Context, at client.Point) {
		if at == p {
			once.Do(victim.Crash)
		}
	}
	victim = client.New(crashCfg, store)
	o := victim.OpenOrder(5000, "TRY")
	require.NotZero(t, o.ID)
	res := victim.Checkout(t.Context(), o.ID, "tok_visa")
	require.ErrorIs(t, res.Err, client.ErrCrashed, "the client died at %s", p)

	_, atts, err := store.Snapshot(t.Context())
	require.NoError(t, err)
	if p == client.PointBeforeStore {
		assert.Empty(t, atts, "nothing stored before the attempt")
		assert.Empty(t, keys.seen(), "nothing sent")
	} else {
		if p == client.PointBeforeSend {
			// A process killed before the send sends nothing (regression:
			// the cancelled call went on to the wire, and whether the
			// request reached the provider was left to the scheduler, so a
			// shrunk counterexample replayed 4 times in 10).
			assert.Empty(t, keys.seen(), "nothing sent by a client killed before the send")
		}
		require.Len(t, atts, 1, "the attempt and its key survive the crash")
		assert.Equal(t, models.AttemptOpen, atts[0].Status)
	}

	restarted := client.New(cfg, store)
	res = restarted.Checkout(t.Context(), o.ID, "tok_visa")
	require.Equal(t, client.OutcomePaid, res.Outcome, "%v", res.Err)
	assert.Len(t, prov.Charges(), 1, "charged once")
	assert.Len(t, keys.distinct(), 1, "one key for the intent: %v", keys.seen())
	orders, atts, err := store.Snapshot(t.Context())
	require.NoError(t, err)
	require.Len(t, atts, 1)
	assert.Equal(t, models.AttemptSucceeded, atts[0].Status)
	assert.Equal(t, models.OrderPaid, orders[0].Status)
}

// keyLog records the Idempotency-Key of every POST on its way to h.
type keyLog struct {
	mu   sync.Mutex // guards keys
	keys []string
}

func (k *keyLog) wrap(h http.Handler) http.RoundTripper {
	return roundTrip(func(r *http.Request) (*http.Response, error) {
		if r.Method == http.MethodPost {
			k.mu.Lock()
			k.keys = append(k.keys, r.Header.Get(models.IdempotencyKeyHeader))
			k.mu.Unlock()
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec.Result(), nil
	})
}

func (k *keyLog) seen() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.keys...)
}

func (k *keyLog) distinct() map[string]bool {
	out := map[string]bool{}
	for _, key := range k.seen() {
		out[key] = true
	}
	return out
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
