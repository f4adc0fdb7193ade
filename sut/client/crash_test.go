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

func TestCrash_during_a_checkout_then_a_new_client_resends_the_same_key(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWire(hang())
		old, store, cfg := newClient(w)
		o := old.OpenOrder(54890, "TRY")

		done := make(chan client.CheckoutResult, 1)
		go func() { done <- old.Checkout(t.Context(), o.ID, "tok_visa") }()
		synctest.Wait() // the first POST is in flight at the provider
		require.Len(t, w.posts(), 1)
		stored := onlyAttempt(t, store)

		old.Crash()
		res := <-done

		assert.Equal(t, client.OutcomeFailed, res.Outcome)
		assert.ErrorIs(t, res.Err, client.ErrCrashed)
		assert.Len(t, w.posts(), 1, "no try after the crash")
		assert.Equal(t, stored, onlyAttempt(t, store), "the attempt survives as it was")
		assert.Equal(t, models.OrderPaymentPending, order(t, store, o.ID).Status)

		// Nothing the dead client does reaches the store.
		assert.Zero(t, old.OpenOrder(100, "TRY"))
		assert.Len(t, store.Orders(), 1)
		w.script(list(charge("ch_1")))
		rep := old.RunReconciliation(t.Context(), stored.CreatedAt.Add(time.Hour))
		assert.Equal(t, client.ReconcileReport{Checked: 1, Errors: 1}, rep)
		assert.Empty(t, w.gets())
		assert.Equal(t, stored, onlyAttempt(t, store))

		// The restarted process resends the stored key.
		w.script(reply(201, charge("ch_1")))
		restarted := client.New(cfg, store)
		res = restarted.Checkout(t.Context(), o.ID, "tok_visa")
		assert.Equal(t, client.OutcomePaid, res.Outcome)
		assert.Equal(t, stored.ID.String(), res.AttemptID)
		assert.Len(t, w.distinctKeys(), 1)
		assert.Equal(t, models.FormatKey(stored.IdempotencyKey), w.posts()[1].KeyHeader)
	})
}

func TestFencing_a_superseded_client_cannot_write(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		w := newWire(func(r *http.Request) (*http.Response, error) {
			<-release // the provider answers only when the test says so
			return reply(201, charge("ch_1"))(r)
		})
		old, store, cfg := newClient(w, func(cfg *client.Config) { cfg.AttemptTimeout = time.Hour; cfg.TotalTimeout = time.Hour })
		o := old.OpenOrder(54890, "TRY")
		done := make(chan client.CheckoutResult, 1)
		go func() { done <- old.Checkout(t.Context(), o.ID, "tok_visa") }()
		synctest.Wait()

		newer := client.New(cfg, store) // opens the store: old's epoch is stale
		close(release)
		res := <-done

		assert.Equal(t, client.OutcomeFailed, res.Outcome)
		assert.ErrorIs(t, res.Err, client.ErrFenced)
		assert.Equal(t, models.AttemptOpen, onlyAttempt(t, store).Status, "old's success write was dropped")
		assert.Equal(t, models.OrderPaymentPending, order(t, store, o.ID).Status)

		res = newer.Checkout(t.Context(), o.ID, "tok_visa")
		assert.Equal(t, client.OutcomePaid, res.Outcome)
		assert.Len(t, w.distinctKeys(), 1)
		assert.Equal(t, models.AttemptSucceeded, onlyAttempt(t, store).Status)
	})
}
