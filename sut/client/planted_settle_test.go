package client_test

import (
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/client"
)

// The planted bugs in how an outcome is settled: by Checkout, by
// reconciliation, and by the payment-ready callback path.

func TestPlanted_ConflictIsFailure_409_declines_and_the_order_can_be_paid_again(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWire(status(409))
		c, store, _ := newClient(w, plant(client.Planted{ConflictIsFailure: true}))
		o := c.OpenOrder(54890, "TRY")

		res := c.Checkout(t.Context(), o.ID, "tok_visa")

		assert.Equal(t, client.OutcomeDeclined, res.Outcome)
		assert.Equal(t, http.StatusPaymentRequired, res.HTTPStatus)
		assert.NoError(t, res.Err)
		assert.Len(t, w.posts(), 1, "a client that reads 409 as final does not retry it")
		assert.Equal(t, models.AttemptDeclined, onlyAttempt(t, store).Status)
		assert.Equal(t, models.OrderPlaced, order(t, store, o.ID).Status)

		w.script(reply(201, charge("ch_2")))
		res = c.Checkout(t.Context(), o.ID, "tok_mastercard")
		assert.Equal(t, client.OutcomePaid, res.Outcome)
		assert.Len(t, store.Attempts(), 2)
		assert.Len(t, w.distinctKeys(), 2, "a second intent while the first may still charge")
	})
}

func TestPlanted_ConflictIsSuccess_409_is_Paid_without_a_charge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWire(status(409))
		c, store, _ := newClient(w, plant(client.Planted{ConflictIsSuccess: true}))
		o := c.OpenOrder(54890, "TRY")

		res := c.Checkout(t.Context(), o.ID, "tok_visa")

		assert.Equal(t, client.OutcomePaid, res.Outcome)
		assert.Equal(t, http.StatusOK, res.HTTPStatus)
		assert.Empty(t, res.ChargeID)
		assert.Len(t, w.posts(), 1, "a client that reads 409 as final does not retry it")
		att := onlyAttempt(t, store)
		assert.Equal(t, models.AttemptSucceeded, att.Status)
		assert.Empty(t, att.ProviderChargeID)
		assert.Equal(t, models.OrderPaid, order(t, store, o.ID).Status)
	})
}

func TestPlanted_UnknownShownAsFailure_500_fails_and_another_card_is_no_conflict(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWire(status(500))
		c, store, _ := newClient(w, plant(client.Planted{UnknownShownAsFailure: true}))
		o := c.OpenOrder(54890, "TRY")

		res := c.Checkout(t.Context(), o.ID, "tok_visa")

		assert.Equal(t, client.OutcomeFailed, res.Outcome)
		assert.Equal(t, http.StatusInternalServerError, res.HTTPStatus)
		assert.ErrorContains(t, res.Err, "payment failed")
		assert.Len(t, w.posts(), 4)
		assert.Equal(t, models.AttemptAbandoned, onlyAttempt(t, store).Status)
		assert.Equal(t, models.OrderPlaced, order(t, store, o.ID).Status)

		// The shopper, told it failed, pays with another card: a new intent.
		w.script(status(503))
		res = c.Checkout(t.Context(), o.ID, "tok_mastercard")
		require.Equal(t, client.OutcomeUnavailable, res.Outcome, "503 leaves the attempt Open")
		// The card-change guard is off: a third card while that one is
		// Open starts a new attempt instead of 409.
		w.script(reply(201, charge("ch_3")))
		res = c.Checkout(t.Context(), o.ID, "tok_amex")

		assert.Equal(t, client.OutcomePaid, res.Outcome)
		atts := store.Attempts()
		require.Len(t, atts, 3)
		assert.Equal(t, []models.AttemptStatus{models.AttemptAbandoned, models.AttemptOpen, models.AttemptSucceeded},
			[]models.AttemptStatus{atts[0].Status, atts[1].Status, atts[2].Status})
		assert.Len(t, w.distinctKeys(), 3)
	})
}

func TestPlanted_ReconcilerNeverAbandons_an_old_attempt_without_a_charge_stays_open(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWire()
		c, store, _ := newClient(w, plant(client.Planted{ReconcilerNeverAbandons: true}))
		o, att := pending(t, w, c, store)
		w.script(list())

		rep := c.RunReconciliation(t.Context(), att.CreatedAt.Add(24*time.Hour))

		assert.Equal(t, client.ReconcileReport{Checked: 1, StillOpen: 1}, rep)
		assert.Equal(t, models.AttemptOpen, onlyAttempt(t, store).Status)
		assert.Equal(t, models.OrderPaymentPending, order(t, store, o.ID).Status)
	})
}

func TestPlanted_ReconcilerAbandonsCharged_an_old_attempt_with_a_charge_is_abandoned(t *testing.T) {
	cases := []struct {
		age     time.Duration
		rep     client.ReconcileReport
		attempt models.AttemptStatus
		order   models.OrderStatus
	}{
		{29 * time.Minute, client.ReconcileReport{Checked: 1, Succeeded: 1}, models.AttemptSucceeded, models.OrderPaid},
		{30 * time.Minute, client.ReconcileReport{Checked: 1, Abandoned: 1}, models.AttemptAbandoned, models.OrderPlaced},
	}
	for _, tc := range cases {
		t.Run(tc.age.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := newWire()
				c, store, _ := newClient(w, plant(client.Planted{ReconcilerAbandonsCharged: true}))
				o, att := pending(t, w, c, store)
				ch := charge("ch_000001")
				ch.MerchantReference = att.Reference()
				w.script(list(ch))

				rep := c.RunReconciliation(t.Context(), att.LastSentAt.Add(tc.age))

				assert.Equal(t, tc.rep, rep)
				assert.Len(t, w.gets(), 1, "it asked, and found the charge")
				assert.Equal(t, tc.attempt, onlyAttempt(t, store).Status)
				assert.Equal(t, tc.order, order(t, store, o.ID).Status)
			})
		})
	}
}

// raceCallback runs Checkout and, 1ms later in virtual time, PaymentReady
// for one order with one card against a provider that takes 500ms.
func raceCallback(t *testing.T, p client.Planted) (*wire, *client.Store, [2]client.CheckoutResult) {
	t.Helper()
	w := newWire(slow(500*time.Millisecond, reply(201, charge("ch_1"))))
	c, store, _ := newClient(w, plant(p))
	o := c.OpenOrder(54890, "TRY")
	var res [2]client.CheckoutResult
	var wg sync.WaitGroup
	wg.Go(func() { res[0] = c.Checkout(t.Context(), o.ID, "tok_visa") })
	time.Sleep(time.Millisecond)
	wg.Go(func() { res[1] = c.PaymentReady(t.Context(), o.ID, "tok_visa") })
	wg.Wait()
	return w, store, res
}

func TestPaymentReady_racing_Checkout_sends_one_key(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, store, res := raceCallback(t, client.Planted{})

		att := onlyAttempt(t, store)
		for _, r := range res {
			assert.Equal(t, client.OutcomePaid, r.Outcome)
			assert.Equal(t, att.ID.String(), r.AttemptID)
		}
		posts := w.posts()
		require.Len(t, posts, 2)
		assert.Equal(t, time.Millisecond, posts[1].At.Sub(posts[0].At), "both in flight at once")
		assert.Equal(t, []string{models.FormatKey(att.IdempotencyKey)}, w.distinctKeys())
	})
}

func TestPlanted_CallbackOwnKey_PaymentReady_racing_Checkout_sends_two_keys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, store, res := raceCallback(t, client.Planted{CallbackOwnKey: true})

		for _, r := range res {
			assert.Equal(t, client.OutcomePaid, r.Outcome)
		}
		assert.NotEqual(t, res[0].AttemptID, res[1].AttemptID)
		atts := store.Attempts()
		require.Len(t, atts, 2)
		assert.Equal(t, models.AttemptSucceeded, atts[0].Status)
		assert.Equal(t, models.AttemptSucceeded, atts[1].Status)
		posts := w.posts()
		require.Len(t, posts, 2)
		assert.Len(t, w.distinctKeys(), 2, "one order, one card, two keys: two charges")
		assert.NotEqual(t, posts[0].Body.MerchantReference, posts[1].Body.MerchantReference)
	})
}
