package machine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/models"
)

// TestHeldAtProvider_OnlyThisStepsRequest: the second click of a
// changed-second-click goes out only while this step's first request holds
// the key at the provider. A request of the same key sent 25 h before (the
// shopper's first try, its response lost) does not count: its key may be
// past the retention window, and the harness's own second click under it
// charged again on the reference (matrix seed 1, a false alarm on
// at-most-one-charge-per-order, before the fix).
func TestHeldAtProvider_OnlyThisStepsRequest(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	old := models.Exchange{Method: "POST", Path: "/v1/charges", Key: "k", HasKey: true, SentAt: t0,
		ArrivalSeq: 2, ProviderDone: true, ProviderStatus: 201}
	step := t0.Add(25 * time.Hour)
	assert.False(t, heldAtProvider([]models.Exchange{old}, "k", step), "a request of an earlier step")
	now := old
	now.SentAt = step.Add(time.Millisecond)
	assert.True(t, heldAtProvider([]models.Exchange{old, now}, "k", step), "this step's request reached the provider")
	now.ProviderStatus = 503
	assert.False(t, heldAtProvider([]models.Exchange{now}, "k", step), "a 5xx frees the key")
}
