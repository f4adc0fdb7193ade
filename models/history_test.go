package models_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
)

func TestHistory_ConcurrentRecordsGetDenseIDsAndOneOrder(t *testing.T) {
	const workers, each = 16, 50
	h := models.NewHistory()
	h.BeginStep("checkout", "", t0)

	type mine struct {
		opIDs, exIDs []int
		seqs         []int // sequence numbers this worker saw, in its own order
	}
	got := make([]mine, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			m := &got[w]
			for i := range each {
				op := h.BeginOp(models.Operation{Actor: "shopper", Kind: models.OpCheckout, Amount: int64(w*each + i)})
				m.opIDs = append(m.opIDs, op)
				ex := h.BeginExchange(models.Exchange{OpID: op, Method: "POST", Amount: int64(w*each + i)})
				m.exIDs = append(m.exIDs, ex)
				h.UpdateExchange(ex, func(e *models.Exchange, seq int) {
					m.seqs = append(m.seqs, e.Seq, seq)
					e.ArrivalSeq = seq
				})
				h.EndOp(op, func(o *models.Operation) { o.Returned = true })
			}
		})
	}
	wg.Wait()

	snap := h.Snapshot()
	const n = workers * each
	require.Len(t, snap.Ops, n)
	require.Len(t, snap.Exchanges, n)
	for i, o := range snap.Ops {
		assert.Equal(t, i+1, o.ID, "op ids are dense, in order")
		assert.Equal(t, 1, o.Step)
		assert.True(t, o.Returned)
	}
	allSeqs := map[int]bool{}
	for i, e := range snap.Exchanges {
		assert.Equal(t, i+1, e.ID, "exchange ids are dense, in order")
		if i > 0 {
			assert.Less(t, snap.Exchanges[i-1].Seq, e.Seq, "Seq increases with the id")
		}
		assert.Less(t, e.Seq, e.ArrivalSeq, "an update comes after the begin")
		// Each exchange is tied to its own operation.
		assert.Equal(t, snap.Ops[e.OpID-1].Amount, e.Amount)
	}
	for w, m := range got {
		assert.True(t, slices.IsSorted(m.opIDs), "worker %d", w)
		assert.True(t, slices.IsSorted(m.exIDs), "worker %d", w)
		for i := 1; i < len(m.seqs); i++ {
			assert.Less(t, m.seqs[i-1], m.seqs[i], "worker %d sees its events in order", w)
		}
		for _, s := range m.seqs {
			assert.False(t, allSeqs[s], "sequence number %d given twice", s)
			allSeqs[s] = true
		}
	}
	assert.Len(t, allSeqs, 2*n)
}

func TestHistory_StepsNumberOperations(t *testing.T) {
	h := models.NewHistory()
	assert.Equal(t, 0, h.CurrentStep())
	op0 := h.BeginOp(models.Operation{Kind: models.OpOpenOrder})
	assert.Equal(t, 1, h.BeginStep("open-order", "1001", t0))
	assert.Equal(t, 2, h.BeginStep("checkout", "1001 visa", t0))
	assert.Equal(t, 2, h.CurrentStep())
	op1 := h.BeginOp(models.Operation{Kind: models.OpCheckout, Step: 99, ID: 99})

	snap := h.Snapshot()
	require.Len(t, snap.Steps, 2)
	assert.Equal(t, models.Step{N: 2, Action: "checkout", Args: "1001 visa", At: t0}, snap.Steps[1])
	assert.Equal(t, []int{1, 2}, []int{op0, op1})
	assert.Equal(t, 0, snap.Ops[0].Step, "before the first step")
	assert.Equal(t, 2, snap.Ops[1].Step, "Step is set by BeginOp, not the caller")
	assert.Equal(t, 2, snap.Ops[1].ID)
}

func TestHistory_UnknownIDsAreIgnored(t *testing.T) {
	h := models.NewHistory()
	op := h.BeginOp(models.Operation{})
	ex := h.BeginExchange(models.Exchange{})
	called := false
	for _, id := range []int{0, -1, op + 1, 100} {
		h.EndOp(id, func(*models.Operation) { called = true })
	}
	for _, id := range []int{0, -1, ex + 1, 100} {
		h.UpdateExchange(id, func(*models.Exchange, int) { called = true })
	}
	assert.False(t, called)
	snap := h.Snapshot()
	assert.Len(t, snap.Ops, 1)
	assert.Len(t, snap.Exchanges, 1)
}

func TestHistory_SnapshotIsACopy(t *testing.T) {
	h := models.NewHistory()
	h.BeginStep("checkout", "", t0)
	h.BeginOp(models.Operation{Result: "paid"})
	h.BeginExchange(models.Exchange{Status: 201})

	snap := h.Snapshot()
	snap.Steps[0].Action = "mutated"
	snap.Ops[0].Result = "mutated"
	snap.Exchanges[0].Status = 500
	snap.Exchanges = append(snap.Exchanges, models.Exchange{ID: 2})
	snap.Ops = append(snap.Ops, models.Operation{ID: 2})

	again := h.Snapshot()
	assert.Equal(t, "checkout", again.Steps[0].Action)
	assert.Equal(t, "paid", again.Ops[0].Result)
	assert.Equal(t, 201, again.Exchanges[0].Status)
	assert.Len(t, again.Exchanges, 1)
	assert.Len(t, again.Ops, 1)

	// And later records do not show up in an earlier snapshot.
	h.UpdateExchange(1, func(e *models.Exchange, _ int) { e.Status = 409 })
	h.BeginExchange(models.Exchange{})
	assert.Equal(t, 201, again.Exchanges[0].Status)
	assert.Len(t, again.Exchanges, 1)
}

func TestWithOp_OpFromRoundTrip(t *testing.T) {
	assert.Equal(t, 0, models.OpFrom(context.Background()))
	ctx := models.WithOp(context.Background(), 42)
	assert.Equal(t, 42, models.OpFrom(ctx))
	inner := models.WithOp(ctx, 7)
	assert.Equal(t, 7, models.OpFrom(inner))
	assert.Equal(t, 42, models.OpFrom(ctx), "the outer context is unchanged")
	child, cancel := context.WithCancel(ctx)
	defer cancel()
	assert.Equal(t, 42, models.OpFrom(child))
	type otherKey struct{}
	assert.Equal(t, 0, models.OpFrom(context.WithValue(context.Background(), otherKey{}, 42)))
}

func TestExchange_Unknown(t *testing.T) {
	cases := []struct {
		name string
		ex   models.Exchange
		want bool
	}{
		{"not done", models.Exchange{Status: 409}, false},
		{"transport error", models.Exchange{Done: true, Err: "timeout"}, true},
		{"201", models.Exchange{Done: true, Status: 201}, false},
		{"402", models.Exchange{Done: true, Status: 402}, false},
		{"409", models.Exchange{Done: true, Status: 409}, true},
		{"422", models.Exchange{Done: true, Status: 422}, false},
		{"429", models.Exchange{Done: true, Status: 429}, false},
		{"500", models.Exchange{Done: true, Status: 500}, true},
		{"502", models.Exchange{Done: true, Status: 502}, true},
		{"503", models.Exchange{Done: true, Status: 503}, false},
		{"504", models.Exchange{Done: true, Status: 504}, true},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, c.ex.Unknown(), c.name)
	}
	assert.True(t, models.Exchange{Method: "POST"}.IsPost())
	assert.False(t, models.Exchange{Method: "GET"}.IsPost())
}
