package client_test

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/client"
)

// The seed's slow-provider run: the first try times out after 3s, the retry
// 1s later gets 409 (the first request still processing), the next one the
// replayed 201. One key, one charge.
func TestPipeline_slow_provider_timeout_409_201(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWire(hang(), status(409), reply(201, charge("ch_000001")))
		c, store, _ := newClient(w)
		o := c.OpenOrder(54890, "TRY")
		start := time.Now()

		res := c.Checkout(t.Context(), o.ID, "tok_visa")

		assert.Equal(t, client.OutcomePaid, res.Outcome)
		assert.Equal(t, "ch_000001", res.ChargeID)
		posts := w.posts()
		require.Len(t, posts, 3)
		assert.Len(t, w.distinctKeys(), 1)
		assert.Equal(t, 4*time.Second, posts[1].At.Sub(start), "3s attempt timeout + 1s delay")
		assert.Equal(t, 5*time.Second, posts[2].At.Sub(start))
		assert.Equal(t, models.AttemptSucceeded, onlyAttempt(t, store).Status)
	})
}

func TestPipeline_timeout_then_201_resends_the_same_key(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWire(slow(5*time.Second, reply(201, charge("ch_1"))), reply(201, charge("ch_1")))
		c, _, _ := newClient(w)
		o := c.OpenOrder(54890, "TRY")

		res := c.Checkout(t.Context(), o.ID, "tok_visa")

		assert.Equal(t, client.OutcomePaid, res.Outcome)
		assert.Len(t, w.posts(), 2)
		assert.Len(t, w.distinctKeys(), 1)
	})
}

func TestPipeline_total_timeout_bounds_a_provider_that_never_answers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWire(hang())
		c, store, _ := newClient(w)
		o := c.OpenOrder(54890, "TRY")
		start := time.Now()

		res := c.Checkout(t.Context(), o.ID, "tok_visa")

		assert.Equal(t, 10*time.Second, time.Since(start))
		assert.Equal(t, client.OutcomePaymentPending, res.Outcome)
		assert.Equal(t, http.StatusAccepted, res.HTTPStatus)
		assert.LessOrEqual(t, len(w.posts()), 4)
		assert.Len(t, w.posts(), 3, "tries at 0s, 4s and 8s")
		assert.Len(t, w.distinctKeys(), 1)
		assert.Equal(t, models.AttemptOpen, onlyAttempt(t, store).Status)
	})
}

func TestPipeline_a_POST_without_a_key_is_never_retried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWire(status(503))
		stripKey := func(next http.RoundTripper) http.RoundTripper {
			return roundTripFunc(func(r *http.Request) (*http.Response, error) {
				r = r.Clone(r.Context())
				r.Header.Del(models.IdempotencyKeyHeader)
				return next.RoundTrip(r)
			})
		}
		c, _, _ := newClient(w, func(cfg *client.Config) { cfg.WrapTransport = stripKey })
		o := c.OpenOrder(54890, "TRY")

		res := c.Checkout(t.Context(), o.ID, "tok_visa")

		posts := w.posts()
		require.Len(t, posts, 1)
		assert.False(t, posts[0].HasKey)
		assert.Equal(t, client.OutcomeUnavailable, res.Outcome)
	})
}

func TestPipeline_WrapTransport_sees_every_try(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWire(status(500))
		var seen []string
		spy := func(next http.RoundTripper) http.RoundTripper {
			return roundTripFunc(func(r *http.Request) (*http.Response, error) {
				seen = append(seen, r.Header.Get(models.IdempotencyKeyHeader))
				return next.RoundTrip(r)
			})
		}
		c, store, _ := newClient(w, func(cfg *client.Config) { cfg.WrapTransport = spy })
		o := c.OpenOrder(54890, "TRY")

		c.Checkout(t.Context(), o.ID, "tok_visa")

		key := models.FormatKey(onlyAttempt(t, store).IdempotencyKey)
		assert.Equal(t, []string{key, key, key, key}, seen)
	})
}

func TestPipeline_Retry_After_is_honoured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWire(status(429, "Retry-After", "2"), reply(201, charge("ch_1")))
		c, _, _ := newClient(w)
		o := c.OpenOrder(54890, "TRY")

		res := c.Checkout(t.Context(), o.ID, "tok_visa")

		require.Equal(t, client.OutcomePaid, res.Outcome)
		posts := w.posts()
		require.Len(t, posts, 2)
		assert.GreaterOrEqual(t, posts[1].At.Sub(posts[0].At), 2*time.Second)
	})
}

func TestPipeline_Retry_After_is_capped_by_the_total_timeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWire(status(503, "Retry-After", "60"))
		c, _, _ := newClient(w)
		o := c.OpenOrder(54890, "TRY")
		start := time.Now()

		res := c.Checkout(t.Context(), o.ID, "tok_visa")

		assert.Zero(t, time.Since(start), "a pause past the total timeout ends the retries at once")
		assert.Equal(t, client.OutcomeUnavailable, res.Outcome)
		assert.Len(t, w.posts(), 1)
	})
}

// A retry due at the very instant the total timeout ends is never sent:
// 429 with Retry-After 2 at 0s, tries at 2s and 6s that time out at 5s
// and 9s, and the fixed delay ends at 10s, when the total timeout does.
// The delay's timer and the total timeout's fire at one virtual instant,
// and synctest does not order the goroutines they wake: the fourth try
// went out, and was given up at once, in about half of the bubbles, and
// one seed of TestConformance recorded one exchange more in some runs
// than in others (IDEMCHECK_PARALLEL=1 -rapid.seed=541 -rapid.checks=1:
// 19 or 20, an outage more or less). Each run here is a fresh bubble;
// every one must send three tries.
func TestPipeline_a_retry_due_as_the_total_timeout_ends_is_not_sent(t *testing.T) {
	for i := range 50 {
		synctest.Test(t, func(t *testing.T) {
			w := newWire(status(429, "Retry-After", "2"), hang())
			c, _, _ := newClient(w)
			o := c.OpenOrder(54890, "TRY")
			start := time.Now()

			res := c.Checkout(t.Context(), o.ID, "tok_visa")

			assert.Equal(t, 10*time.Second, time.Since(start))
			assert.Equal(t, client.OutcomePaymentPending, res.Outcome)
			var at []time.Duration
			for _, p := range w.posts() {
				at = append(at, p.At.Sub(start))
			}
			assert.Equal(t, []time.Duration{0, 2 * time.Second, 6 * time.Second}, at, "run %d", i)
		})
	}
}

func TestPipeline_the_breaker_opens_and_then_fails_fast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWire(status(503))
		c, store, _ := newClient(w, func(cfg *client.Config) {
			cfg.Breaker = client.BreakerConfig{FailureRatio: 0.5, MinimumThroughput: 2,
				SamplingDuration: 30 * time.Second, BreakDuration: 5 * time.Second}
		})
		first := c.OpenOrder(100, "TRY")
		second := c.OpenOrder(200, "TRY")

		res := c.Checkout(t.Context(), first.ID, "tok_visa")
		assert.Equal(t, client.OutcomeUnavailable, res.Outcome)
		assert.Len(t, w.posts(), 2, "the breaker opened after two failed tries")

		start := time.Now()
		res = c.Checkout(t.Context(), second.ID, "tok_visa")
		assert.Equal(t, client.OutcomeUnavailable, res.Outcome)
		assert.Equal(t, http.StatusServiceUnavailable, res.HTTPStatus)
		assert.ErrorIs(t, res.Err, client.ErrUnavailable)
		assert.Zero(t, time.Since(start), "fails fast")
		assert.Len(t, w.posts(), 2, "no request sent while open")
		assert.Equal(t, models.OrderPaymentPending, order(t, store, second.ID).Status, "the key is kept for a retry")

		// After BreakDuration one probe goes through; its success closes the breaker.
		time.Sleep(5 * time.Second)
		w.script(reply(201, charge("ch_1")))
		res = c.Checkout(t.Context(), second.ID, "tok_visa")
		assert.Equal(t, client.OutcomePaid, res.Outcome)
		res = c.Checkout(t.Context(), first.ID, "tok_visa")
		assert.Equal(t, client.OutcomePaid, res.Outcome)
		assert.Len(t, w.posts(), 4)
	})
}

func TestShouldRetry(t *testing.T) {
	post := func(key string) *http.Request {
		r, _ := http.NewRequest(http.MethodPost, baseURL+"/v1/charges", nil)
		if key != "" {
			r.Header.Set(models.IdempotencyKeyHeader, key)
		}
		return r
	}
	get, _ := http.NewRequest(http.MethodGet, baseURL+"/v1/charges", nil)
	resp := func(code int) *http.Response { return &http.Response{StatusCode: code} }

	for _, code := range []int{409, 429, 500, 502, 503, 504} {
		assert.True(t, client.ShouldRetry(post(`"k"`), resp(code), nil), "%d", code)
		assert.True(t, client.ShouldRetry(get, resp(code), nil), "GET %d", code)
		assert.False(t, client.ShouldRetry(post(""), resp(code), nil), "keyless %d", code)
	}
	for _, code := range []int{200, 201, 400, 402, 404, 422, 501} {
		assert.False(t, client.ShouldRetry(post(`"k"`), resp(code), nil), "%d", code)
	}
	assert.True(t, client.ShouldRetry(post(`"k"`), nil, http.ErrHandlerTimeout))
	assert.False(t, client.ShouldRetry(post(""), nil, http.ErrHandlerTimeout))
	assert.False(t, client.ShouldRetry(nil, resp(503), nil))
}
