package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/client"
	"github.com/idemcheck/idemcheck/sut/provider"
)

// losing serves p and loses the answer of the refund POSTs it is told to
// (the provider processed them), recording every refund key header.
type losing struct {
	p    *provider.Provider
	mu   sync.Mutex // guards lose, keys
	lose int        // refund POSTs still to lose
	keys []string
}

func (l *losing) RoundTrip(r *http.Request) (*http.Response, error) {
	w := httptest.NewRecorder()
	l.p.ServeHTTP(w, r)
	l.mu.Lock()
	defer l.mu.Unlock()
	if r.Method == http.MethodPost && r.URL.Path == models.RefundsPath {
		l.keys = append(l.keys, r.Header.Get(models.IdempotencyKeyHeader))
		if l.lose > 0 {
			l.lose--
			return nil, errors.New("connection reset after the provider answered")
		}
	}
	return w.Result(), nil
}

// paidOrder opens an order of 5000 TRY and pays it with visa.
func paidOrder(t *testing.T, c *client.Client) models.Order {
	t.Helper()
	o := c.OpenOrder(5000, "TRY")
	res := c.Checkout(context.Background(), o.ID, "tok_visa")
	require.Equal(t, client.OutcomePaid, res.Outcome, res.Err)
	return res.Order
}

// A refund's retry after a lost response resends the key stored with the
// refund intent before the first send: the provider replays, one refund.
func TestRefund_RetryResendsTheIntentsKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		wire := &losing{p: provider.New(provider.Config{}), lose: 1}
		c, store, _ := newClient(wire)
		o := paidOrder(t, c)
		res := c.Refund(context.Background(), o.ID, 2000)
		require.Equal(t, client.RefundDone, res.Outcome, res.Err)
		require.Len(t, wire.keys, 2)
		assert.Equal(t, wire.keys[0], wire.keys[1], "one key per refund intent")
		intents, _ := store.Refunds(context.Background())
		require.Len(t, intents, 1)
		assert.Equal(t, models.FormatKey(intents[0].IdempotencyKey), wire.keys[0])
		assert.Equal(t, models.RefundSucceeded, intents[0].Status)
		assert.Equal(t, res.RefundID, intents[0].ProviderRefundID)
		require.Len(t, wire.p.Refunds(), 1)
		assert.Equal(t, intents[0].Reference(), wire.p.Refunds()[0].MerchantReference)

		// More than is left: refused, nothing refunded.
		res = c.Refund(context.Background(), o.ID, 3001)
		assert.Equal(t, client.RefundDenied, res.Outcome)
		assert.Len(t, wire.p.Refunds(), 1)
	})
}

// A refund whose every answer was lost stays Open; reconciliation finds
// the refund by the intent's reference and settles it.
func TestRefund_ReconciliationSettlesAnUnknownRefund(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		wire := &losing{p: provider.New(provider.Config{}), lose: 100}
		c, store, _ := newClient(wire)
		o := paidOrder(t, c)
		res := c.Refund(context.Background(), o.ID, 5000)
		require.Equal(t, client.RefundPending, res.Outcome, res.Err)
		time.Sleep(client.DefaultMinAge + time.Second)
		rep := c.RunReconciliation(context.Background(), time.Now())
		assert.Equal(t, 1, rep.Succeeded, "%+v", rep)
		intents, _ := store.Refunds(context.Background())
		require.Len(t, intents, 1)
		assert.Equal(t, models.RefundSucceeded, intents[0].Status)
		assert.Len(t, wire.p.Refunds(), 1)
	})
}

// A refund intent left Open for a day (every answer lost, the
// reconciliation job down) is not resent under its key: the provider's
// 24 h retention window may have passed, and a resend refunded again (the
// 20 000-sequence run, seed 21307382, before the fix). The merchant's
// retry answers RefundPending with ErrStaleKey and sends nothing.
func TestRefund_StaleIntentIsNotResent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		wire := &losing{p: provider.New(provider.Config{}), lose: 100}
		c, _, _ := newClient(wire)
		o := paidOrder(t, c)
		res := c.Refund(context.Background(), o.ID, 1000)
		require.Equal(t, client.RefundPending, res.Outcome, res.Err)
		sent := len(wire.keys)
		time.Sleep(25 * time.Hour) // virtual time: the job is down all along
		res = c.Refund(context.Background(), o.ID, 1000)
		assert.Equal(t, client.RefundPending, res.Outcome)
		assert.ErrorIs(t, res.Err, client.ErrStaleKey)
		assert.Len(t, wire.keys, sent, "nothing sent under the day-old key")
	})
}
