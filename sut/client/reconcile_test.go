package client_test

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/client"
)

// pending opens an order and leaves its checkout PaymentPending (409 x4).
func pending(t *testing.T, w *wire, c *client.Client, store *client.Store) (models.Order, models.PaymentAttempt) {
	t.Helper()
	o := c.OpenOrder(54890, "TRY")
	w.script(status(409))
	require.Equal(t, client.OutcomePaymentPending, c.Checkout(t.Context(), o.ID, "tok_visa").Outcome)
	return o, onlyAttempt(t, store)
}

func list(charges ...models.Charge) answer {
	return reply(http.StatusOK, models.ChargeList{Data: append([]models.Charge{}, charges...)})
}

func TestReconciliation_respects_MinAge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWire()
		c, store, _ := newClient(w)
		_, att := pending(t, w, c, store)
		w.script(list())

		rep := c.RunReconciliation(t.Context(), att.CreatedAt.Add(2*time.Minute-time.Second))

		assert.Equal(t, client.ReconcileReport{}, rep)
		assert.Empty(t, w.gets())
		assert.True(t, onlyAttempt(t, store).LastCheckedAt.IsZero())
	})
}

func TestReconciliation_found_charge_settles_the_order(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWire()
		c, store, _ := newClient(w)
		o, att := pending(t, w, c, store)
		ch := charge("ch_000001")
		ch.MerchantReference = att.Reference()
		w.script(list(ch))
		now := att.CreatedAt.Add(2 * time.Minute)

		rep := c.RunReconciliation(t.Context(), now)

		assert.Equal(t, client.ReconcileReport{Checked: 1, Succeeded: 1}, rep)
		gets := w.gets()
		require.Len(t, gets, 1)
		assert.Equal(t, "/v1/charges", gets[0].Path)
		assert.Equal(t, att.Reference(), gets[0].Query.Get("merchant_reference"))
		got := onlyAttempt(t, store)
		assert.Equal(t, models.AttemptSucceeded, got.Status)
		assert.Equal(t, "ch_000001", got.ProviderChargeID)
		assert.Equal(t, now, got.LastCheckedAt)
		assert.Equal(t, models.Order{ID: o.ID, Total: 54890, Currency: "TRY", Status: models.OrderPaid,
			ProviderChargeID: "ch_000001"}, order(t, store, o.ID))
	})
}

func TestReconciliation_no_charge_yet_stays_open(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWire()
		c, store, _ := newClient(w)
		o, att := pending(t, w, c, store)
		w.script(list(models.Charge{ID: "ch_x", Status: "failed", MerchantReference: att.Reference()}))
		now := att.CreatedAt.Add(29 * time.Minute)

		rep := c.RunReconciliation(t.Context(), now)

		assert.Equal(t, client.ReconcileReport{Checked: 1, StillOpen: 1}, rep)
		got := onlyAttempt(t, store)
		assert.Equal(t, models.AttemptOpen, got.Status)
		assert.Equal(t, now, got.LastCheckedAt)
		assert.Equal(t, models.OrderPaymentPending, order(t, store, o.ID).Status)
	})
}

func TestReconciliation_abandons_after_AbandonAfter_and_a_new_checkout_gets_a_new_key(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWire()
		c, store, _ := newClient(w)
		o, att := pending(t, w, c, store)
		w.script(list())

		rep := c.RunReconciliation(t.Context(), att.CreatedAt.Add(30*time.Minute))

		assert.Equal(t, client.ReconcileReport{Checked: 1, Abandoned: 1}, rep)
		assert.Equal(t, models.AttemptAbandoned, onlyAttempt(t, store).Status)
		assert.Equal(t, models.OrderPlaced, order(t, store, o.ID).Status)

		w.script(reply(201, charge("ch_2")))
		res := c.Checkout(t.Context(), o.ID, "tok_visa")
		assert.Equal(t, client.OutcomePaid, res.Outcome)
		atts := store.Attempts()
		require.Len(t, atts, 2)
		assert.NotEqual(t, att.IdempotencyKey, atts[1].IdempotencyKey)
		assert.Len(t, w.distinctKeys(), 2)
	})
}

func TestReconciliation_GETs_are_retried_and_failures_counted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWire()
		c, store, _ := newClient(w)
		_, att := pending(t, w, c, store)

		w.script(status(503), list())
		rep := c.RunReconciliation(t.Context(), att.CreatedAt.Add(3*time.Minute))
		assert.Equal(t, client.ReconcileReport{Checked: 1, StillOpen: 1}, rep)
		assert.Len(t, w.gets(), 2)

		w.script(status(500))
		rep = c.RunReconciliation(t.Context(), att.CreatedAt.Add(time.Hour))
		assert.Equal(t, client.ReconcileReport{Checked: 1, Errors: 1}, rep)
		assert.Len(t, w.gets(), 2+4)
		assert.Equal(t, models.AttemptOpen, onlyAttempt(t, store).Status, "a failed query leaves the attempt")
	})
}

func TestReconciliationJob_Run_ticks_every_Interval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWire()
		c, store, _ := newClient(w, func(cfg *client.Config) {
			cfg.Interval = time.Minute
			cfg.MinAge = 2 * time.Minute
			cfg.AbandonAfter = 5 * time.Minute
		})
		o, _ := pending(t, w, c, store)
		w.script(list())
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- c.ReconciliationJob().Run(ctx) }()

		time.Sleep(6 * time.Minute)
		synctest.Wait()
		cancel()

		assert.ErrorIs(t, <-done, context.Canceled)
		assert.Equal(t, models.OrderPlaced, order(t, store, o.ID).Status)
		assert.Equal(t, models.AttemptAbandoned, onlyAttempt(t, store).Status)
	})
}
