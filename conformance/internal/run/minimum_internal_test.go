package run

import (
	"flag"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/idemcheck/idemcheck/conformance/internal/machine"
	"github.com/idemcheck/idemcheck/sut/mutants"
)

// TestKeyPerOrder_MinimumIsADoubleClick shows key-per-order's documented
// minimum where the kill matrix's seeds do not reach it: an order opened,
// then only open-order, double-click and time-passes drawn (300 sequences of 15 steps, seed 1), a
// double click of the declined card breaks one-key-per-intent in 2 shopper
// steps (the later click starts a new intent under the order's key), and
// no sequence breaks it in fewer. With every action drawn, rapid's
// shrinker stops at 3 steps on the matrix's five seeds (a checkout
// declined, then another checkout; or a crash mid-checkout, then the
// pay-again step): it lowers action indices, and double-click sorts after
// checkout, so it never trades two checkouts for one double click
// (TestMutantMatrix: key-per-order's LocalMinimum).
func TestKeyPerOrder_MinimumIsADoubleClick(t *testing.T) {
	mut, err := mutants.Lookup("key-per-order")
	require.NoError(t, err)
	for name, v := range map[string]string{"rapid.seed": "1", "rapid.checks": "300", "rapid.steps": "15"} {
		f := flag.Lookup(name)
		require.NotNil(t, f, name)
		old := f.Value.String()
		require.NoError(t, f.Value.Set(v))
		t.Cleanup(func() { _ = f.Value.Set(old) })
	}
	r := benchRun(t, Config{Config: machine.Config{}, Mutant: mut.Name})
	shortest, failures := 0, 0
	rapid.Check(t, func(t *rapid.T) {
		rapid.SyncTest(t, func(t *rapid.T) {
			m := r.bubbleMachine(t, r.mutant, machine.PhaseSearch, nil)
			all := m.Actions()
			all["open-order"](t) // the first step: a double click needs an order
			t.Repeat(map[string]func(*rapid.T){"open-order": all["open-order"], "double-click": all["double-click"], "time-passes": all["time-passes"], "": all[""]})
			v, _ := m.Failed()
			if v == nil {
				return
			}
			assert.Equal(t, mut.Invariant, v.Invariant, "the first invariant broken")
			failures++
			if shortest == 0 || m.Steps() < shortest {
				shortest = m.Steps()
			}
		})
	})
	t.Logf("%d of 300 sequences broke %s, the shortest in %d steps", failures, mut.Invariant, shortest)
	require.NotZero(t, failures, "no sequence of open-order and double-click broke %s", mut.Invariant)
	assert.Equal(t, mut.MinSteps, shortest, "the shortest sequence that broke %s (of %d)", mut.Invariant, failures)
}
