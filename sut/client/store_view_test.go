package client

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
)

// The in-memory Store hands out the same view while nothing changes
// (Snapshot and Refunds are read after every step of the harness): each
// change of an order, an attempt or a refund intent shows in the next
// read, however recently the store was read before it.
func TestStoreViewFollowsEveryChange(t *testing.T) {
	ctx := context.Background()
	s := NewStore()
	e, err := s.Open(ctx, "p1")
	require.NoError(t, err)
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	read := func() ([]models.Order, []models.PaymentAttempt, []models.RefundIntent) {
		o, a, err := s.Snapshot(ctx)
		require.NoError(t, err)
		r, err := s.Refunds(ctx)
		require.NoError(t, err)
		return o, a, r
	}
	read()
	o, err := s.OpenOrder(ctx, e, 1500, "TRY")
	require.NoError(t, err)
	orders, _, _ := read()
	require.Len(t, orders, 1, "OpenOrder")

	st, err := s.GetOrStart(ctx, e, StartSpec{OrderID: o.ID, CardHash: "h", Now: now, NewID: uuid.New, NewKey: func() string { return "k1" }})
	require.NoError(t, err)
	orders, atts, _ := read()
	require.Len(t, atts, 1, "GetOrStart")
	require.Equal(t, models.OrderPaymentPending, orders[0].Status, "GetOrStart")

	require.NoError(t, s.MarkChecked(ctx, e, st.Attempt.ID, now.Add(time.Minute)))
	_, atts, _ = read()
	require.Equal(t, now.Add(time.Minute), atts[0].LastCheckedAt, "MarkChecked")

	_, err = s.Succeed(ctx, e, st.Attempt.ID, "ch_000001")
	require.NoError(t, err)
	orders, atts, _ = read()
	require.Equal(t, models.AttemptSucceeded, atts[0].Status, "Succeed")
	require.Equal(t, models.OrderPaid, orders[0].Status, "Succeed")

	ri, _, err := s.StartRefund(ctx, e, RefundSpec{OrderID: o.ID, Charge: "ch_000001", Amount: 500, Now: now, NewID: uuid.New, NewKey: func() string { return "r1" }})
	require.NoError(t, err)
	_, _, refunds := read()
	require.Len(t, refunds, 1, "StartRefund")

	require.NoError(t, s.SettleRefund(ctx, e, ri.ID, models.RefundSucceeded, "re_000001"))
	_, _, refunds = read()
	require.Equal(t, models.RefundSucceeded, refunds[0].Status, "SettleRefund")
}
