package client_test

import (
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/client"
)

// Each test here switches on one planted bug and shows its deviation from
// the reference client on the wire and in the store. The reference
// behaviour each one breaks is tested in checkout_test.go, pipeline_test.go,
// crash_test.go and reconcile_test.go.

// plant returns a config mutation that switches on p.
func plant(p client.Planted) func(*client.Config) {
	return func(cfg *client.Config) { cfg.Planted = p }
}

func TestPlanted_KeyPerOrder_another_card_after_a_decline_reuses_the_key(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWire(reply(402, declined("insufficient_funds")), reply(201, charge("ch_2")))
		c, store, _ := newClient(w, plant(client.Planted{KeyPerOrder: true}))
		o := c.OpenOrder(54890, "TRY")

		require.Equal(t, client.OutcomeDeclined, c.Checkout(t.Context(), o.ID, "tok_chargeDeclined").Outcome)
		c.Checkout(t.Context(), o.ID, "tok_mastercard")

		posts := w.posts()
		require.Len(t, posts, 2)
		assert.Equal(t, posts[0].KeyHeader, posts[1].KeyHeader, "two intents, one key")
		assert.NotEqual(t, posts[0].Body.Source, posts[1].Body.Source)
		want := uuid.NewSHA1(uuid.NameSpaceURL, []byte("order-1")).String()
		assert.Equal(t, models.FormatKey(want), posts[0].KeyHeader)
		atts := store.Attempts()
		require.Len(t, atts, 2)
		assert.NotEqual(t, atts[0].ID, atts[1].ID)
		assert.Equal(t, want, atts[0].IdempotencyKey)
		assert.Equal(t, want, atts[1].IdempotencyKey)
	})
}

func TestPlanted_KeyAfterSend_a_crash_loses_the_key_and_the_restart_sends_a_new_one(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWire(hang())
		old, store, cfg := newClient(w, plant(client.Planted{KeyAfterSend: true}))
		o := old.OpenOrder(54890, "TRY")
		var mu sync.Mutex // guards storedAtSend
		var storedAtSend []string
		w.onRequest = func(_ int, _ *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			for _, a := range store.Attempts() { // no require: this runs on the transport's goroutine
				storedAtSend = append(storedAtSend, a.IdempotencyKey)
			}
		}

		done := make(chan client.CheckoutResult, 1)
		go func() { done <- old.Checkout(t.Context(), o.ID, "tok_visa") }()
		synctest.Wait() // the first POST is in flight
		require.Len(t, w.posts(), 1)
		first := unquote(t, w.posts()[0].KeyHeader)
		assert.Empty(t, onlyAttempt(t, store).IdempotencyKey, "the key is only in memory")

		old.Crash()
		res := <-done
		assert.ErrorIs(t, res.Err, client.ErrCrashed)
		assert.Empty(t, onlyAttempt(t, store).IdempotencyKey, "the key died with the process")

		w.script(reply(201, charge("ch_1")))
		restarted := client.New(cfg, store)
		res = restarted.Checkout(t.Context(), o.ID, "tok_visa")

		assert.Equal(t, client.OutcomePaid, res.Outcome)
		posts := w.posts()
		require.Len(t, posts, 2)
		second := unquote(t, posts[1].KeyHeader)
		assert.NotEqual(t, first, second, "one intent, two keys")
		assert.Equal(t, posts[0].Body.MerchantReference, posts[1].Body.MerchantReference, "the same attempt")
		att := onlyAttempt(t, store)
		assert.Equal(t, att.ID.String(), res.AttemptID)
		assert.Equal(t, second, att.IdempotencyKey)
		mu.Lock()
		defer mu.Unlock()
		assert.Equal(t, []string{"", second}, storedAtSend, "the restart stores its new key before the send")
	})
}

func TestPlanted_KeyAfterSend_without_a_crash_the_key_is_stored_when_the_call_returns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWire(status(409))
		c, store, _ := newClient(w, plant(client.Planted{KeyAfterSend: true}))
		o := c.OpenOrder(54890, "TRY")
		var storedAtFirstSend []models.PaymentAttempt
		w.onRequest = func(n int, _ *http.Request) {
			if n == 0 {
				storedAtFirstSend = store.Attempts()
			}
		}

		res := c.Checkout(t.Context(), o.ID, "tok_visa")

		require.Equal(t, client.OutcomePaymentPending, res.Outcome)
		require.Len(t, storedAtFirstSend, 1)
		assert.Empty(t, storedAtFirstSend[0].IdempotencyKey, "stored without its key before the send")
		assert.Equal(t, models.AttemptOpen, storedAtFirstSend[0].Status)
		key := unquote(t, w.posts()[0].KeyHeader)
		assert.Equal(t, key, onlyAttempt(t, store).IdempotencyKey, "written once the call returned")

		w.script(reply(201, charge("ch_1")))
		res = c.Checkout(t.Context(), o.ID, "tok_visa")
		assert.Equal(t, client.OutcomePaid, res.Outcome)
		assert.Len(t, w.distinctKeys(), 1, "without a crash every try carries the one key")
	})
}

func TestPlanted_RetryWithoutKey_keyless_POSTs_are_retried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWire(status(503))
		c, _, _ := newClient(w, plant(client.Planted{RetryWithoutKey: true}))
		o := c.OpenOrder(54890, "TRY")

		res := c.Checkout(t.Context(), o.ID, "tok_visa")

		assert.Equal(t, client.OutcomeUnavailable, res.Outcome)
		posts := w.posts()
		require.Len(t, posts, 4, "1 try + 3 retries, with no key")
		for _, p := range posts {
			assert.False(t, p.HasKey)
		}
	})
}

func TestPlanted_RetryContractViolation_400_and_422_are_retried(t *testing.T) {
	for _, code := range []int{http.StatusBadRequest, http.StatusUnprocessableEntity} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := newWire(status(code))
				c, store, _ := newClient(w, plant(client.Planted{RetryContractViolation: true}))
				o := c.OpenOrder(54890, "TRY")

				res := c.Checkout(t.Context(), o.ID, "tok_visa")

				assert.Len(t, w.posts(), 4)
				assert.Len(t, w.distinctKeys(), 1)
				assert.Equal(t, client.OutcomeFailed, res.Outcome)
				assert.ErrorIs(t, res.Err, client.ErrContractViolation)
				assert.Equal(t, models.AttemptOpen, onlyAttempt(t, store).Status)
			})
		})
	}
}

func TestPlanted_KeyAfterSend_a_double_click_in_one_process_shares_the_memory_key(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWire(slow(500*time.Millisecond, reply(201, charge("ch_1"))))
		c, store, _ := newClient(w, plant(client.Planted{KeyAfterSend: true}))
		o := c.OpenOrder(54890, "TRY")

		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() { c.Checkout(t.Context(), o.ID, "tok_visa") })
		}
		wg.Wait()

		require.Len(t, w.posts(), 3)
		assert.Len(t, w.distinctKeys(), 1, "only a crash loses the key")
		assert.Equal(t, models.FormatKey(onlyAttempt(t, store).IdempotencyKey), w.distinctKeys()[0])
	})
}
