package provider_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/provider"
)

// Each scenario below runs one request sequence against a provider with the
// given planted bugs and returns the answers in order, plus the provider.
// TestPlanted_<Bug> shows the deviation; TestPlanted_ZeroIsReference runs
// the same scenarios with the zero Planted and expects docs/provider-api.md.

// holdFirst returns a BeforeCommit hook that holds only its first call:
// it signals entered, then waits for release. Later calls pass through.
func holdFirst(entered chan<- struct{}, release <-chan struct{}) func(*http.Request) {
	var calls atomic.Int32
	return func(*http.Request) {
		if calls.Add(1) == 1 {
			entered <- struct{}{}
			<-release
		}
	}
}

// whileHeld sends first under key and holds it in BeforeCommit, sends
// second under key meanwhile, releases the first, then sends after; it
// returns the three answers in that order.
func whileHeld(t *testing.T, planted provider.Planted, first, second, after models.ChargeRequest) (*provider.Provider, []*httptest.ResponseRecorder) {
	t.Helper()
	entered, release := make(chan struct{}, 1), make(chan struct{})
	p := provider.New(provider.Config{BeforeCommit: holdFirst(entered, release), Planted: planted})
	firstDone := postAsync(t, p, `"k"`, first)
	within(t, entered, "the first request to reach BeforeCommit")
	w2 := post(t, p, `"k"`, second)
	close(release)
	w1 := within(t, firstDone, "the first request to finish")
	return p, []*httptest.ResponseRecorder{w1, w2, post(t, p, `"k"`, after)}
}

// inSequence sends each request under its key header, one after another.
func inSequence(t *testing.T, planted provider.Planted, keys []string, reqs ...models.ChargeRequest) (*provider.Provider, []*httptest.ResponseRecorder) {
	t.Helper()
	p := provider.New(provider.Config{Planted: planted})
	var ws []*httptest.ResponseRecorder
	for i, req := range reqs {
		ws = append(ws, post(t, p, keys[i], req))
	}
	return p, ws
}

func same(key string, n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = key
	}
	return keys
}

var (
	declined   = func() models.ChargeRequest { r := visa; r.Source = "tok_chargeDeclined"; return r }()
	otherMoney = func() models.ChargeRequest { r := visa; r.Amount++; return r }()
)

// Scenarios.

func concurrentPair(t *testing.T, planted provider.Planted) (*provider.Provider, []*httptest.ResponseRecorder) {
	return whileHeld(t, planted, visa, visa, visa)
}

func thrice(t *testing.T, planted provider.Planted) (*provider.Provider, []*httptest.ResponseRecorder) {
	return inSequence(t, planted, same(`"k"`, 3), visa, visa, visa)
}

func otherBody(t *testing.T, planted provider.Planted) (*provider.Provider, []*httptest.ResponseRecorder) {
	return inSequence(t, planted, same(`"k"`, 2), visa, otherMoney)
}

func otherBodyInFlight(t *testing.T, planted provider.Planted) (*provider.Provider, []*httptest.ResponseRecorder) {
	return whileHeld(t, planted, visa, otherMoney, visa)
}

func declineThenVisa(t *testing.T, planted provider.Planted) (*provider.Provider, []*httptest.ResponseRecorder) {
	return inSequence(t, planted, same(`"k"`, 4), declined, declined, visa, visa)
}

// slowFirst: the first request's processing advances the clock by slow;
// then the same key twice more, the last 48h later.
func slowFirst(t *testing.T, planted provider.Planted, slow time.Duration) (*provider.Provider, []*httptest.ResponseRecorder) {
	t.Helper()
	clock := &fakeClock{t: time.Date(2026, 10, 22, 12, 0, 0, 0, time.UTC)}
	var calls int
	p := provider.New(provider.Config{Now: clock.Now, Planted: planted, BeforeCommit: func(*http.Request) {
		if calls++; calls == 1 {
			clock.t = clock.t.Add(slow)
		}
	}})
	ws := []*httptest.ResponseRecorder{post(t, p, `"k"`, visa), post(t, p, `"k"`, visa)}
	clock.t = clock.t.Add(48 * time.Hour)
	return p, append(ws, post(t, p, `"k"`, visa))
}

func quotedThenBare(t *testing.T, planted provider.Planted) (*provider.Provider, []*httptest.ResponseRecorder) {
	return inSequence(t, planted, []string{`"abc"`, `abc`, `"abc"`}, visa, visa, visa)
}

// requireFirst asserts w is a first (not replayed) 201 and returns its charge id.
func requireFirst(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	ch := decodeCharge(t, w)
	assert.Empty(t, w.Header().Get(models.ReplayedHeader), "a first answer is not a replay")
	return ch.ID
}

// requireReplayOf asserts w replays first: same status and body bytes.
func requireReplayOf(t *testing.T, first, w *httptest.ResponseRecorder) {
	t.Helper()
	require.Equal(t, first.Code, w.Code, w.Body.String())
	assert.Equal(t, first.Body.String(), w.Body.String())
	assert.Equal(t, "true", w.Header().Get(models.ReplayedHeader))
}

func TestPlanted_NoInflightLock(t *testing.T) {
	p, ws := concurrentPair(t, provider.Planted{NoInflightLock: true})
	// The second was processed while the first was held: both charged.
	assert.Equal(t, "ch_000001", requireFirst(t, ws[1]))
	assert.Equal(t, "ch_000002", requireFirst(t, ws[0]))
	assert.Len(t, p.Charges(), 2)
	// The first finished last, so its result is the stored one.
	requireReplayOf(t, ws[0], ws[2])
}

func TestPlanted_ReplayNewCharge(t *testing.T) {
	p, ws := thrice(t, provider.Planted{ReplayNewCharge: true})
	for i, w := range ws {
		assert.Equal(t, []string{"ch_000001", "ch_000002", "ch_000003"}[i], requireFirst(t, w))
	}
	assert.Len(t, p.Charges(), 3)
	// A mismatch is still refused, and the latest result is the stored one.
	requireProblem(t, post(t, p, `"k"`, otherMoney), http.StatusUnprocessableEntity)
	assert.Equal(t, "ch_000004", requireFirst(t, post(t, p, `"k"`, visa)))
}

func TestPlanted_ConflictAfterCompletion(t *testing.T) {
	p, ws := thrice(t, provider.Planted{ConflictAfterCompletion: true})
	assert.Equal(t, "ch_000001", requireFirst(t, ws[0]))
	requireProblem(t, ws[1], http.StatusConflict)
	requireProblem(t, ws[2], http.StatusConflict)
	assert.Len(t, p.Charges(), 1)
	requireProblem(t, post(t, p, `"k"`, otherMoney), http.StatusUnprocessableEntity)
}

func TestPlanted_NoFingerprint(t *testing.T) {
	planted := provider.Planted{NoFingerprint: true}
	t.Run("completed", func(t *testing.T) {
		p, ws := otherBody(t, planted)
		requireFirst(t, ws[0])
		requireReplayOf(t, ws[0], ws[1]) // the first body, amount and all
		assert.Equal(t, visa.Amount, decodeCharge(t, ws[1]).Amount)
		assert.Len(t, p.Charges(), 1)
	})
	t.Run("in flight", func(t *testing.T) {
		p, ws := otherBodyInFlight(t, planted)
		requireFirst(t, ws[0])
		requireProblem(t, ws[1], http.StatusConflict)
		requireReplayOf(t, ws[0], ws[2])
		assert.Len(t, p.Charges(), 1)
	})
}

func TestPlanted_ErrorsNotStored(t *testing.T) {
	p, ws := declineThenVisa(t, provider.Planted{ErrorsNotStored: true})
	for _, w := range ws[:2] {
		require.Equal(t, http.StatusPaymentRequired, w.Code)
		assert.Empty(t, w.Header().Get(models.ReplayedHeader), "the decline ran again")
	}
	// The key was forgotten: another card under it charges.
	assert.Equal(t, "ch_000001", requireFirst(t, ws[2]))
	// A 2xx is still stored.
	requireReplayOf(t, ws[2], ws[3])
	assert.Len(t, p.Charges(), 1)
}

func TestPlanted_StuckInflight(t *testing.T) {
	planted := provider.Planted{StuckInflight: true}
	t.Run("slower than StuckAfter", func(t *testing.T) {
		p, ws := slowFirst(t, planted, 2*time.Second)
		pr := requireProblem(t, ws[0], http.StatusInternalServerError)
		assert.NotEmpty(t, pr.Detail)
		requireProblem(t, ws[1], http.StatusConflict)
		requireProblem(t, ws[2], http.StatusConflict) // 48h later: in flight forever
		assert.Empty(t, p.Charges())
	})
	t.Run("exactly StuckAfter", func(t *testing.T) {
		p, ws := slowFirst(t, planted, provider.StuckAfter)
		requireFirst(t, ws[0])
		requireReplayOf(t, ws[0], ws[1])
		assert.Equal(t, "ch_000002", requireFirst(t, ws[2]), "expired after 24h as usual")
		assert.Len(t, p.Charges(), 2)
	})
}

func TestPlanted_QuotedKeyDistinct(t *testing.T) {
	p, ws := quotedThenBare(t, provider.Planted{QuotedKeyDistinct: true})
	assert.Equal(t, "ch_000001", requireFirst(t, ws[0]))
	assert.Equal(t, "ch_000002", requireFirst(t, ws[1]))
	requireReplayOf(t, ws[0], ws[2])
	assert.Len(t, p.Charges(), 2)
	// A malformed key is still refused.
	requireProblem(t, post(t, p, `"abc`, visa), http.StatusBadRequest)
}

// TestPlanted_ZeroIsReference runs every scenario above with the zero
// Planted: each answers as docs/provider-api.md says.
func TestPlanted_ZeroIsReference(t *testing.T) {
	var zero provider.Planted
	t.Run("NoInflightLock scenario", func(t *testing.T) {
		p, ws := concurrentPair(t, zero)
		requireFirst(t, ws[0])
		requireProblem(t, ws[1], http.StatusConflict)
		requireReplayOf(t, ws[0], ws[2])
		assert.Len(t, p.Charges(), 1)
	})
	t.Run("ReplayNewCharge and ConflictAfterCompletion scenario", func(t *testing.T) {
		p, ws := thrice(t, zero)
		assert.Equal(t, "ch_000001", requireFirst(t, ws[0]))
		requireReplayOf(t, ws[0], ws[1])
		requireReplayOf(t, ws[0], ws[2])
		assert.Len(t, p.Charges(), 1)
	})
	t.Run("NoFingerprint scenario", func(t *testing.T) {
		p, ws := otherBody(t, zero)
		requireFirst(t, ws[0])
		requireProblem(t, ws[1], http.StatusUnprocessableEntity)
		assert.Len(t, p.Charges(), 1)

		p, ws = otherBodyInFlight(t, zero)
		requireFirst(t, ws[0])
		requireProblem(t, ws[1], http.StatusUnprocessableEntity)
		requireReplayOf(t, ws[0], ws[2])
		assert.Len(t, p.Charges(), 1)
	})
	t.Run("ErrorsNotStored scenario", func(t *testing.T) {
		p, ws := declineThenVisa(t, zero)
		require.Equal(t, http.StatusPaymentRequired, ws[0].Code)
		requireReplayOf(t, ws[0], ws[1])
		requireProblem(t, ws[2], http.StatusUnprocessableEntity)
		requireProblem(t, ws[3], http.StatusUnprocessableEntity)
		assert.Empty(t, p.Charges())
	})
	t.Run("StuckInflight scenario", func(t *testing.T) {
		// No worker timeout, and the key expires after 24h.
		p, ws := slowFirst(t, zero, 2*time.Second)
		assert.Equal(t, "ch_000001", requireFirst(t, ws[0]))
		requireReplayOf(t, ws[0], ws[1])
		assert.Equal(t, "ch_000002", requireFirst(t, ws[2]))
		assert.Len(t, p.Charges(), 2)
	})
	t.Run("QuotedKeyDistinct scenario", func(t *testing.T) {
		p, ws := quotedThenBare(t, zero)
		requireFirst(t, ws[0])
		requireReplayOf(t, ws[0], ws[1])
		requireReplayOf(t, ws[0], ws[2])
		assert.Len(t, p.Charges(), 1)
	})
}
