// Package storetest is the contract every client.AttemptStore keeps: one
// suite of tests, run against the in-memory Store (sut/client) and the
// PostgreSQL one (sut/client/pgstore), so both mean the same thing.
package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/client"
)

// Run runs the contract as subtests of t; open returns a new, empty store
// and arranges its cleanup.
func Run(t *testing.T, open func(t *testing.T) client.AttemptStore) {
	for name, test := range map[string]func(*testing.T, client.AttemptStore){
		"attempt_and_order_move_together":     attemptAndOrderMoveTogether,
		"fencing_is_per_instance":             fencingIsPerInstance,
		"abandon_is_conditional":              abandonIsConditional,
		"unconditional_abandon_overwrites":    unconditionalAbandonOverwrites,
		"two_instances_start_one_attempt":     twoInstancesStartOneAttempt,
		"two_reconcilers_abandon_once":        twoReconcilersAbandonOnce,
		"times_round_trip_to_the_nanosecond":  timesRoundTrip,
		"set_key_fills_only_an_empty_key":     setKeyFillsOnlyAnEmptyKey,
		"succeed_is_recorded_over_an_abandon": succeedOverAbandon,
	} {
		t.Run(name, func(t *testing.T) { test(t, open(t)) })
	}
}

var t0 = time.Date(2026, 12, 1, 9, 0, 0, 123456789, time.UTC)

func spec(orderID int64, card string, now time.Time, key string) client.StartSpec {
	return client.StartSpec{OrderID: orderID, CardHash: models.CardHash(card), Now: now,
		NewID: func() uuid.UUID { return uuid.Must(uuid.NewV7()) }, NewKey: func() string { return key }}
}

// setup opens instance "a" and one order of 5000 TRY.
func setup(t *testing.T, s client.AttemptStore) (context.Context, client.Epoch, models.Order) {
	ctx := context.Background()
	e, err := s.Open(ctx, "a")
	require.NoError(t, err)
	o, err := s.OpenOrder(ctx, e, 5000, "TRY")
	require.NoError(t, err)
	require.Equal(t, models.Order{ID: 1, Total: 5000, Currency: "TRY", Status: models.OrderPlaced}, o)
	return ctx, e, o
}

func attemptAndOrderMoveTogether(t *testing.T, s client.AttemptStore) {
	ctx, e, o := setup(t, s)
	st, err := s.GetOrStart(ctx, e, spec(o.ID, "tok_visa", t0, "k1"))
	require.NoError(t, err)
	assert.False(t, st.Reused)
	assert.Equal(t, models.OrderPaymentPending, st.Order.Status)
	assert.Equal(t, "k1", st.Attempt.IdempotencyKey)
	orders, atts, err := s.Snapshot(ctx)
	require.NoError(t, err)
	assert.Equal(t, models.OrderPaymentPending, orders[0].Status, "the order moved with the attempt")
	require.Len(t, atts, 1)
	assert.Equal(t, "k1", atts[0].IdempotencyKey, "the key is stored with the attempt")

	again, err := s.GetOrStart(ctx, e, spec(o.ID, "tok_visa", t0.Add(time.Minute), "k2"))
	require.NoError(t, err)
	assert.True(t, again.Reused)
	assert.Equal(t, "k1", again.Attempt.IdempotencyKey)
	assert.True(t, again.Attempt.LastSentAt.Equal(t0.Add(time.Minute)))

	_, err = s.GetOrStart(ctx, e, spec(o.ID, "tok_mastercard", t0, "k3"))
	assert.ErrorIs(t, err, client.ErrAttemptConflict)
	_, err = s.GetOrStart(ctx, e, spec(99, "tok_visa", t0, "k4"))
	assert.ErrorIs(t, err, client.ErrUnknownOrder)

	paid, err := s.Succeed(ctx, e, st.Attempt.ID, "ch_1")
	require.NoError(t, err)
	assert.Equal(t, models.Order{ID: 1, Total: 5000, Currency: "TRY", Status: models.OrderPaid, ProviderChargeID: "ch_1"}, paid)
	res, err := s.GetOrStart(ctx, e, spec(o.ID, "tok_visa", t0, "k5"))
	assert.ErrorIs(t, err, client.ErrAlreadyPaid)
	assert.Equal(t, models.OrderPaid, res.Order.Status)
	_, atts, _ = s.Snapshot(ctx)
	assert.Len(t, atts, 1, "neither the conflict nor the paid order stored an attempt")
}

func fencingIsPerInstance(t *testing.T, s client.AttemptStore) {
	ctx, a1, o := setup(t, s)
	b, err := s.Open(ctx, "b")
	require.NoError(t, err)
	a2, err := s.Open(ctx, "a") // instance a restarts
	require.NoError(t, err)
	_, err = s.GetOrStart(ctx, a1, spec(o.ID, "tok_visa", t0, "k1"))
	assert.ErrorIs(t, err, client.ErrFenced, "the crashed process of a is fenced")
	_, err = s.OpenOrder(ctx, a1, 100, "TRY")
	assert.ErrorIs(t, err, client.ErrFenced)
	_, err = s.GetOrStart(ctx, b, spec(o.ID, "tok_visa", t0, "k1"))
	require.NoError(t, err, "instance b is not fenced by a's restart")
	require.NoError(t, s.Fence(ctx, a2))
	_, err = s.OpenOrder(ctx, a2, 100, "TRY")
	assert.ErrorIs(t, err, client.ErrFenced, "Fence ends the epoch")
	_, err = s.OpenOrder(ctx, b, 100, "TRY")
	assert.NoError(t, err)
	orders, atts, err := s.Snapshot(ctx)
	require.NoError(t, err)
	assert.Len(t, orders, 2)
	assert.Len(t, atts, 1)
}

func abandonIsConditional(t *testing.T, s client.AttemptStore) {
	ctx, e, o := setup(t, s)
	st, err := s.GetOrStart(ctx, e, spec(o.ID, "tok_visa", t0, "k1"))
	require.NoError(t, err)
	// The shopper resends after the reconciler looked (idle since t0).
	_, err = s.GetOrStart(ctx, e, spec(o.ID, "tok_visa", t0.Add(time.Second), "k2"))
	require.NoError(t, err)
	ok, err := s.Abandon(ctx, e, client.AbandonSpec{ID: st.Attempt.ID, IdleSince: t0})
	require.NoError(t, err)
	assert.False(t, ok, "resent since: not abandoned")
	_, err = s.Succeed(ctx, e, st.Attempt.ID, "ch_1")
	require.NoError(t, err)
	ok, err = s.Abandon(ctx, e, client.AbandonSpec{ID: st.Attempt.ID, IdleSince: t0.Add(time.Hour)})
	require.NoError(t, err)
	assert.False(t, ok, "settled: not abandoned")
	orders, atts, _ := s.Snapshot(ctx)
	assert.Equal(t, models.AttemptSucceeded, atts[0].Status)
	assert.Equal(t, models.OrderPaid, orders[0].Status)
	_, err = s.Abandon(ctx, e, client.AbandonSpec{ID: uuid.New(), IdleSince: t0})
	assert.ErrorIs(t, err, client.ErrUnknownOrder)
}

// unconditionalAbandonOverwrites pins the planted bug UnconditionalSettle:
// the write that drops the condition overwrites a Succeeded attempt.
func unconditionalAbandonOverwrites(t *testing.T, s client.AttemptStore) {
	ctx, e, o := setup(t, s)
	st, err := s.GetOrStart(ctx, e, spec(o.ID, "tok_visa", t0, "k1"))
	require.NoError(t, err)
	_, err = s.Succeed(ctx, e, st.Attempt.ID, "ch_1")
	require.NoError(t, err)
	ok, err := s.Abandon(ctx, e, client.AbandonSpec{ID: st.Attempt.ID, IdleSince: t0, Unconditional: true})
	require.NoError(t, err)
	assert.True(t, ok)
	_, atts, _ := s.Snapshot(ctx)
	assert.Equal(t, models.AttemptAbandoned, atts[0].Status)
}

func twoInstancesStartOneAttempt(t *testing.T, s client.AttemptStore) {
	ctx, a, o := setup(t, s)
	b, err := s.Open(ctx, "b")
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		e := a
		if i%2 == 1 {
			e = b
		}
		wg.Go(func() { _, errs[i] = s.GetOrStart(ctx, e, spec(o.ID, "tok_visa", t0, uuid.NewString())) })
	}
	wg.Wait()
	for _, err := range errs {
		assert.NoError(t, err)
	}
	_, atts, _ := s.Snapshot(ctx)
	assert.Len(t, atts, 1, "concurrent checkouts of one order on two instances share one attempt")
}

func twoReconcilersAbandonOnce(t *testing.T, s client.AttemptStore) {
	ctx, a, o := setup(t, s)
	b, err := s.Open(ctx, "b")
	require.NoError(t, err)
	st, err := s.GetOrStart(ctx, a, spec(o.ID, "tok_visa", t0, "k1"))
	require.NoError(t, err)
	var wg sync.WaitGroup
	got := make([]bool, 6)
	for i := range got {
		e := []client.Epoch{a, b}[i%2]
		wg.Go(func() {
			ok, err := s.Abandon(ctx, e, client.AbandonSpec{ID: st.Attempt.ID, IdleSince: t0.Add(time.Hour)})
			assert.NoError(t, err)
			got[i] = ok
		})
	}
	wg.Wait()
	n := 0
	for _, ok := range got {
		if ok {
			n++
		}
	}
	assert.Equal(t, 1, n, "exactly one reconciler abandons the attempt")
}

func timesRoundTrip(t *testing.T, s client.AttemptStore) {
	ctx, e, o := setup(t, s)
	st, err := s.GetOrStart(ctx, e, spec(o.ID, "tok_visa", t0, "k1"))
	require.NoError(t, err)
	require.NoError(t, s.MarkChecked(ctx, e, st.Attempt.ID, t0.Add(37*time.Microsecond+1)))
	atts, err := s.OpenAttempts(ctx, t0)
	require.NoError(t, err)
	require.Len(t, atts, 1, "created at the cutoff counts")
	a := atts[0]
	assert.True(t, a.CreatedAt.Equal(t0), "%v", a.CreatedAt)
	assert.True(t, a.LastSentAt.Equal(t0))
	assert.True(t, a.LastCheckedAt.Equal(t0.Add(37*time.Microsecond+1)))
	atts, err = s.OpenAttempts(ctx, t0.Add(-1))
	require.NoError(t, err)
	assert.Empty(t, atts)
	_, fresh, _ := s.Snapshot(ctx)
	assert.True(t, fresh[0].LastCheckedAt.Equal(t0.Add(37*time.Microsecond+1)))
}

func setKeyFillsOnlyAnEmptyKey(t *testing.T, s client.AttemptStore) {
	ctx, e, o := setup(t, s)
	st, err := s.GetOrStart(ctx, e, spec(o.ID, "tok_visa", t0, ""))
	require.NoError(t, err)
	require.NoError(t, s.SetKey(ctx, e, st.Attempt.ID, "k1"))
	require.NoError(t, s.SetKey(ctx, e, st.Attempt.ID, "k2"))
	_, atts, _ := s.Snapshot(ctx)
	assert.Equal(t, "k1", atts[0].IdempotencyKey)
}

func succeedOverAbandon(t *testing.T, s client.AttemptStore) {
	ctx, e, o := setup(t, s)
	st, err := s.GetOrStart(ctx, e, spec(o.ID, "tok_visa", t0, "k1"))
	require.NoError(t, err)
	ok, err := s.Abandon(ctx, e, client.AbandonSpec{ID: st.Attempt.ID, IdleSince: t0})
	require.NoError(t, err)
	require.True(t, ok)
	ord, err := s.LoadOrder(ctx, o.ID)
	require.NoError(t, err)
	assert.Equal(t, models.OrderPlaced, ord.Status)
	ord, err = s.Succeed(ctx, e, st.Attempt.ID, "ch_late")
	require.NoError(t, err)
	assert.Equal(t, models.OrderPaid, ord.Status, "a 201 is the provider's truth")
	declined, err := s.EndAttempt(ctx, e, st.Attempt.ID, models.AttemptDeclined)
	require.NoError(t, err)
	assert.Equal(t, models.OrderPaid, declined.Status, "EndAttempt leaves a settled attempt alone")
}
