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

// TestReconciliationWaitsForAResentKey is the regression for the first bug
// the conformance property found (books-balance, 6 steps): an attempt
// created 31 minutes ago is resent by the shopper with the same card; while
// the provider is still processing that request, reconciliation finds no
// charge and — measuring AbandonAfter from CreatedAt, as the seed article's
// job does — abandoned the attempt; the charge then landed on an abandoned
// attempt. AbandonAfter must count from the last send.
func TestReconciliationWaitsForAResentKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWire()
		c, store, _ := newClient(w)
		o, att := pending(t, w, c, store)

		time.Sleep(31 * time.Minute)
		// The shopper retries with the same card; the provider takes 20 s
		// and the client gives up (total timeout) while it works.
		w.script(repeat(4, slow(20*time.Second, status(201)))...)
		res := c.Checkout(t.Context(), o.ID, "tok_visa")
		require.Equal(t, client.OutcomePaymentPending, res.Outcome)
		resent := onlyAttempt(t, store)
		require.Equal(t, att.IdempotencyKey, resent.IdempotencyKey)
		require.True(t, resent.LastSentAt.After(att.CreatedAt.Add(30*time.Minute)), "the resend is stored")

		// Reconciliation looks before the late charge is visible.
		w.script(list())
		rep := c.RunReconciliation(t.Context(), time.Now())

		assert.Equal(t, 0, rep.Abandoned, "an attempt resent moments ago must not be abandoned")
		assert.Equal(t, models.AttemptOpen, onlyAttempt(t, store).Status)
		assert.Equal(t, models.OrderPaymentPending, order(t, store, o.ID).Status)

		// Once AbandonAfter has passed since the resend, it may be.
		time.Sleep(30 * time.Minute)
		w.script(list())
		rep = c.RunReconciliation(t.Context(), time.Now())
		assert.Equal(t, 1, rep.Abandoned)
		assert.Equal(t, models.AttemptAbandoned, onlyAttempt(t, store).Status)
	})
}
