package client_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/client"
)

// staleAge is the default KeyRetention − StaleKeyMargin: 24 h − 1 h.
const staleAge = 23 * time.Hour

// postsAfter counts the POSTs sent at or after at carrying key header h.
func postsAfter(w *wire, at time.Time, h string) int {
	n := 0
	for _, s := range w.posts() {
		if !s.At.Before(at) && s.KeyHeader == h {
			n++
		}
	}
	return n
}

// stalePending leaves an order PaymentPending and lets age pass; it
// returns the wire, client, store, order, attempt, and how many POSTs were
// sent until then.
func stalePending(t *testing.T, age time.Duration, mutate ...func(*client.Config)) (*wire, *client.Client, *client.Store, models.Order, models.PaymentAttempt, int) {
	t.Helper()
	w := newWire()
	c, store, _ := newClient(w, mutate...)
	o, att := pending(t, w, c, store)
	time.Sleep(age) // virtual time in the bubble
	return w, c, store, o, att, len(w.posts())
}

// A key as old as the window is not resent: the checkout reconciles the
// attempt first, finds no charge, abandons it and pays under a new key.
func TestStaleKey_reconciled_first_then_paid_under_a_new_key(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, c, store, o, att, _ := stalePending(t, staleAge)
		old := w.posts()[0].KeyHeader
		retryAt := time.Now()
		w.script(list(), reply(201, charge("ch_2")))

		res := c.Checkout(t.Context(), o.ID, "tok_visa")

		assert.Equal(t, client.OutcomePaid, res.Outcome)
		assert.Zero(t, postsAfter(w, retryAt, old), "the stale key was resent")
		require.Len(t, w.gets(), 1)
		assert.Equal(t, att.Reference(), w.gets()[0].Query.Get("merchant_reference"))
		atts := store.Attempts()
		require.Len(t, atts, 2)
		assert.Equal(t, models.AttemptAbandoned, atts[0].Status)
		assert.Equal(t, models.AttemptSucceeded, atts[1].Status)
	})
}

// The stale attempt's charge is found: the order is Paid, nothing is sent.
func TestStaleKey_found_charge_pays_without_a_send(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, c, store, o, att, posts := stalePending(t, staleAge+time.Hour)
		ch := charge("ch_1")
		ch.MerchantReference = att.Reference()
		w.script(list(ch))

		res := c.Checkout(t.Context(), o.ID, "tok_visa")

		assert.Equal(t, client.OutcomePaid, res.Outcome)
		assert.Equal(t, "ch_1", res.Order.ProviderChargeID)
		assert.Len(t, w.posts(), posts)
		assert.Equal(t, models.AttemptSucceeded, onlyAttempt(t, store).Status)
	})
}

// Reconciliation cannot settle the attempt (the provider does not answer
// the GET): the checkout refuses to resend and the order stays
// PaymentPending.
func TestStaleKey_unsettled_attempt_is_not_resent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, c, store, o, _, posts := stalePending(t, staleAge)
		w.script(status(503))

		res := c.Checkout(t.Context(), o.ID, "tok_visa")

		assert.Equal(t, client.OutcomePaymentPending, res.Outcome)
		assert.Equal(t, 202, res.HTTPStatus)
		assert.ErrorIs(t, res.Err, client.ErrStaleKey)
		assert.Len(t, w.posts(), posts, "nothing was sent")
		assert.Equal(t, models.AttemptOpen, onlyAttempt(t, store).Status)
		assert.Equal(t, models.OrderPaymentPending, order(t, store, o.ID).Status)
	})
}

// A key younger than the window is resent as before, without asking; the
// StaleKeyResend mutant resends one of any age.
func TestStaleKey_young_key_resent_and_mutant_resends_any(t *testing.T) {
	for _, tc := range []struct {
		name    string
		age     time.Duration
		planted bool
	}{{"younger than the window", staleAge - time.Minute, false}, {"planted StaleKeyResend", 25 * time.Hour, true}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w, c, _, o, _, _ := stalePending(t, tc.age, func(cfg *client.Config) { cfg.Planted.StaleKeyResend = tc.planted })
				old := w.posts()[0].KeyHeader
				retryAt := time.Now()
				w.script(reply(201, charge("ch_1")))

				res := c.Checkout(t.Context(), o.ID, "tok_visa")

				assert.Equal(t, client.OutcomePaid, res.Outcome)
				assert.Equal(t, 1, postsAfter(w, retryAt, old))
				assert.Empty(t, w.gets())
			})
		})
	}
}
