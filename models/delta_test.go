package models_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
)

// A synced snapshot equals a fresh copy after every change, and its Delta
// names exactly the new elements and the older ones that changed.
func TestHistory_SyncCopiesOnlyWhatChanged(t *testing.T) {
	h := models.NewHistory()
	var s models.Snapshot
	h.Sync(&s)
	require.NotNil(t, s.Delta)
	assert.Zero(t, s.Delta.Exchanges)

	h.BeginStep("checkout", "", t0)
	op := h.BeginOp(models.Operation{Kind: models.OpCheckout})
	a := h.BeginExchange(models.Exchange{Method: "POST", Key: "a"})
	b := h.BeginExchange(models.Exchange{Method: "POST", Key: "b"})
	h.Sync(&s)
	assert.Equal(t, h.Snapshot().Exchanges, s.Exchanges)
	assert.Equal(t, 0, s.Delta.Exchanges, "both exchanges are new")
	assert.Empty(t, s.Delta.ChangedExchanges)

	h.UpdateExchange(b, func(e *models.Exchange, seq int) { e.Done, e.Status = true, 201 })
	h.UpdateExchange(b, func(e *models.Exchange, seq int) { e.ProviderSeq = seq })
	h.EndOp(op, func(o *models.Operation) { o.Returned = true })
	c := h.BeginExchange(models.Exchange{Method: "POST", Key: "c"})
	h.UpdateExchange(c, func(e *models.Exchange, seq int) { e.Done = true })
	h.Sync(&s)
	want := h.Snapshot()
	assert.Equal(t, want.Exchanges, s.Exchanges)
	assert.Equal(t, want.Ops, s.Ops)
	assert.Equal(t, 2, s.Delta.Exchanges, "c is new")
	assert.Equal(t, []int{b - 1}, s.Delta.ChangedExchanges, "b changed twice, named once; a did not change; c is new")
	assert.Equal(t, []int{op - 1}, s.Delta.ChangedOps)

	kept := s.Clone()
	h.UpdateExchange(a, func(e *models.Exchange, seq int) { e.Done = true })
	h.Sync(&s)
	assert.Equal(t, []int{a - 1}, s.Delta.ChangedExchanges)
	assert.False(t, kept.Exchanges[a-1].Done, "a clone outlives the next Sync")
	assert.Equal(t, []int{b - 1}, kept.Delta.ChangedExchanges)

	var other models.Snapshot
	h.Sync(&other)
	assert.Equal(t, h.Snapshot().Exchanges, other.Exchanges, "a new snapshot is filled whole")
	assert.Zero(t, other.Delta.Exchanges)
}
