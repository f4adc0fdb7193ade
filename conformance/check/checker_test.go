package check_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/conformance/check"
)

// A step whose provider events are numbered before those already replayed
// (its exchange reached the provider earlier than the last step's) makes
// the Checker replay the whole history, and it then names what Evaluate
// names: here the earlier arrival took the key first, so the request of
// the first step should have been its replay.
func TestCheckerReplaysWholeWhenEventsInterleave(t *testing.T) {
	f := newFixture()
	first := f.post(f.att.IdempotencyKey, 201, "", 201, "ch_000001")
	first.ArrivalSeq, first.ProviderSeq = 10, 11
	f.charge("ch_000001")
	c := check.NewChecker(check.Safety())
	require.Nil(t, c.Step(f.w))
	require.Equal(t, 0, c.Replays())

	earlier := f.post(f.att.IdempotencyKey, 201, "", 201, "ch_000002")
	earlier.ArrivalSeq, earlier.ProviderSeq = 1, 2
	want := check.Evaluate(f.w, check.Safety())
	require.NotNil(t, want)
	assert.Equal(t, check.ReplayConsistent, want.Invariant)
	assert.Equal(t, want, c.Step(f.w))
	assert.Equal(t, 1, c.Replays())
}

// Steps that only append judge incrementally (no whole replay) and agree
// with Evaluate; a Check replaced on a copy of a stock invariant is judged
// by the new Check, not by the stock incremental form.
func TestCheckerStepsAndReplacedChecks(t *testing.T) {
	f := newFixture()
	c := check.NewChecker(check.Safety())
	f.post(f.att.IdempotencyKey, 0, "timeout", 201, "ch_000001")
	f.charge("ch_000001")
	f.result("PaymentPending")
	require.Nil(t, c.Step(f.w))
	f.post(f.att.IdempotencyKey, 201, "", 201, "ch_000002") // a retry charged anew
	want := check.Evaluate(f.w, check.Safety())
	require.NotNil(t, want)
	assert.Equal(t, check.ReplayConsistent, want.Invariant)
	assert.Equal(t, want, c.Step(f.w))
	assert.Equal(t, 0, c.Replays())

	invs := check.Safety()
	for i := range invs {
		if invs[i].Name == check.ReplayConsistent {
			invs[i].Check = func(check.World) check.Finding { return check.Violation("custom", "always") }
		}
	}
	v := check.NewChecker(invs).Step(newFixture().w)
	require.NotNil(t, v)
	assert.Equal(t, "custom: always", v.Message)
}
