package provider_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/provider"
)

func TestReplay_SameStatusAndBytes(t *testing.T) {
	p := provider.New(provider.Config{})
	first := post(t, p, `"01a1d96c-e23d-77bf-801e-9df969c1d378"`, visa)
	require.Equal(t, http.StatusCreated, first.Code)

	for range 3 {
		again := post(t, p, `"01a1d96c-e23d-77bf-801e-9df969c1d378"`, visa)
		assert.Equal(t, first.Code, again.Code)
		assert.Equal(t, first.Body.Bytes(), again.Body.Bytes())
		assert.Equal(t, "true", again.Header().Get(models.ReplayedHeader))
		assert.Equal(t, "application/json", again.Header().Get("Content-Type"))
	}
	assert.Len(t, p.Charges(), 1)
}

func TestReplay_QuotedAndBareAreOneKey(t *testing.T) {
	p := provider.New(provider.Config{})
	first := post(t, p, `"abc"`, visa)
	bare := post(t, p, `abc`, visa)
	assert.Equal(t, http.StatusCreated, bare.Code)
	assert.Equal(t, first.Body.Bytes(), bare.Body.Bytes())
	assert.Equal(t, "true", bare.Header().Get(models.ReplayedHeader))

	// And the other way round, on a fresh key.
	decodeCharge(t, post(t, p, `def`, visa))
	assert.Equal(t, "true", post(t, p, `"def"`, visa).Header().Get(models.ReplayedHeader))
	assert.Len(t, p.Charges(), 2)
}

func TestMismatch_Is422AndCreatesNothing(t *testing.T) {
	p := provider.New(provider.Config{})
	first := post(t, p, `"k"`, visa)
	other := visa
	other.Amount++
	requireProblem(t, post(t, p, `"k"`, other), http.StatusUnprocessableEntity)
	assert.Len(t, p.Charges(), 1)

	// State unchanged: the original body still replays.
	again := post(t, p, `"k"`, visa)
	assert.Equal(t, first.Body.Bytes(), again.Body.Bytes())
	assert.Equal(t, "true", again.Header().Get(models.ReplayedHeader))
}

// blockFirst returns a BeforeCommit hook that signals entered and then
// waits for release: it holds the first request in flight.
func blockFirst(entered chan<- struct{}, release <-chan struct{}) func(*http.Request) {
	return func(*http.Request) {
		entered <- struct{}{}
		<-release
	}
}

// postAsync sends req under keyHeader in a goroutine; the recorder arrives
// on the returned channel once ServeHTTP returns.
func postAsync(t *testing.T, p *provider.Provider, keyHeader string, req models.ChargeRequest) <-chan *httptest.ResponseRecorder {
	raw := body(t, req)
	done := make(chan *httptest.ResponseRecorder, 1)
	go func() {
		w := httptest.NewRecorder()
		p.ServeHTTP(w, newPost(keyHeader, raw))
		done <- w
	}()
	return done
}

func TestInFlight_SameBodyIs409(t *testing.T) {
	entered, release := make(chan struct{}, 1), make(chan struct{})
	p := provider.New(provider.Config{BeforeCommit: blockFirst(entered, release)})

	firstDone := postAsync(t, p, `"k"`, visa)
	within(t, entered, "the first request to reach BeforeCommit")

	pr := requireProblem(t, post(t, p, `"k"`, visa), http.StatusConflict)
	assert.NotEmpty(t, pr.Detail)
	assert.Empty(t, p.Charges(), "nothing is created while in flight")

	close(release)
	first := within(t, firstDone, "the first request to finish")
	decodeCharge(t, first)
	// Once completed, the same request replays.
	again := post(t, p, `"k"`, visa)
	assert.Equal(t, first.Body.Bytes(), again.Body.Bytes())
	assert.Len(t, p.Charges(), 1)
}

func TestInFlight_MismatchWinsOver409(t *testing.T) {
	entered, release := make(chan struct{}, 1), make(chan struct{})
	p := provider.New(provider.Config{BeforeCommit: blockFirst(entered, release)})

	firstDone := postAsync(t, p, `"k"`, visa)
	within(t, entered, "the first request to reach BeforeCommit")

	other := visa
	other.Source = "tok_mastercard"
	requireProblem(t, post(t, p, `"k"`, other), http.StatusUnprocessableEntity)

	close(release)
	decodeCharge(t, within(t, firstDone, "the first request to finish"))
	assert.Len(t, p.Charges(), 1)
}

func TestDecline_Is402StoredAndReplayed(t *testing.T) {
	p := provider.New(provider.Config{})
	declined := visa
	declined.Source = "tok_chargeDeclined"

	first := post(t, p, `"k"`, declined)
	require.Equal(t, http.StatusPaymentRequired, first.Code)
	assert.Equal(t, "application/json", first.Header().Get("Content-Type"))
	assert.Equal(t, `{"error":{"type":"card_error","code":"card_declined","decline_code":"insufficient_funds","decline_id":"dc_000001"}}`,
		first.Body.String())

	again := post(t, p, `"k"`, declined)
	assert.Equal(t, http.StatusPaymentRequired, again.Code)
	assert.Equal(t, first.Body.Bytes(), again.Body.Bytes())
	assert.Equal(t, "true", again.Header().Get(models.ReplayedHeader))
	assert.Empty(t, p.Charges())
}

// fakeClock is an injectable Config.Now.
type fakeClock struct{ t time.Time }

func (c *fakeClock) Now() time.Time { return c.t }

func TestRetention_DefaultIs24h(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 10, 22, 12, 0, 0, 0, time.UTC)}
	p := provider.New(provider.Config{Now: clock.Now})
	first := decodeCharge(t, post(t, p, `"k"`, visa))
	assert.Equal(t, clock.t, p.Charges()[0].Created)

	clock.t = clock.t.Add(24 * time.Hour)
	atEdge := post(t, p, `"k"`, visa)
	assert.Equal(t, "true", atEdge.Header().Get(models.ReplayedHeader), "still remembered at exactly 24h")
	assert.Equal(t, first.ID, decodeCharge(t, atEdge).ID)

	clock.t = clock.t.Add(time.Nanosecond)
	after := post(t, p, `"k"`, visa)
	assert.Empty(t, after.Header().Get(models.ReplayedHeader))
	assert.Equal(t, "ch_000002", decodeCharge(t, after).ID, "forgotten after 24h+1ns: a new charge")
	assert.Len(t, p.Charges(), 2)
}

func TestRetention_Custom(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 10, 22, 12, 0, 0, 0, time.UTC)}
	p := provider.New(provider.Config{Now: clock.Now, Retention: time.Hour})
	decodeCharge(t, post(t, p, `"k"`, visa))

	clock.t = clock.t.Add(time.Hour)
	assert.Equal(t, "true", post(t, p, `"k"`, visa).Header().Get(models.ReplayedHeader))

	clock.t = clock.t.Add(time.Nanosecond)
	// After the window a different body is no mismatch either: the key is new.
	other := visa
	other.Amount = 100
	assert.Equal(t, "ch_000002", decodeCharge(t, post(t, p, `"k"`, other)).ID)
}
