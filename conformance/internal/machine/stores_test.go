package machine

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/checkout"
	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/client"
	"github.com/idemcheck/idemcheck/sut/mutants"
)

// resendDuringReconciliation drives a forced interleaving that kills
// pg-unconditional-settle: an attempt left open by dropped requests ages
// past AbandonAfter, and race makes the shopper's resend on instance 2
// land between the reconciler's read (no charge) and its write; a minute
// later (the resend's charge has landed, however slowly it was processed)
// it returns the first violation, nil when every invariant holds.
func resendDuringReconciliation(t *testing.T, store, mutant string, race func(*Machine, models.PaymentAttempt)) *check.ViolationError {
	var v *check.ViolationError
	cfg, err := Config{ClientStore: store, Instances: 2}.WithDefaults()
	require.NoError(t, err)
	cfg, drop, err := cfg.PrepareStore(t.Context())
	require.NoError(t, err)
	defer drop()
	synctest.Test(t, func(t *testing.T) {
		var m *mutants.Mutant
		if mutant != "" {
			mm, err := mutants.Lookup(mutant)
			require.NoError(t, err)
			m = &mm
		}
		w, err := NewWorld(cfg, m)
		require.NoError(t, err)
		o := w.openOrder("shopper", 5000, "TRY")
		drop := faults.Fault{Kind: faults.KindDropRequest}
		w.faults.Schedule([]faults.Fault{drop, drop, drop, drop})
		res := w.checkout(w.cli, "shopper", o, "visa")
		require.Equal(t, checkout.Pending, res.Outcome)
		w.lastCard[o.ID] = "visa"
		w.faults.Heal()
		a, ok := w.openAttemptOf(o.ID)
		require.True(t, ok, "the dropped requests left the attempt Open")
		race(&Machine{w: w}, a)
		w.clock.Advance(time.Minute)
		snap, err := w.Snapshot()
		require.NoError(t, err)
		require.Len(t, snap.Charges, 1, "the resend charged the order")
		v = check.Evaluate(snap, check.Safety())
		w.faults.Heal()
		w.clock.Advance(drainTime)
	})
	return v
}

// TestReconciliationRacedByAResendKeepsTheResentAttempt: the two shapes
// that put the shopper's resend on instance 2 between the reconciler's read
// and its write. The reconcile action's race (raceResend) resends at the
// settle point and the charge is recorded at once; reconcile-during-checkout's
// order drawn with several instances (resendAfterRead) leads the resend
// with slow processing past the client's total timeout, so the charge
// lands after the write. The reference's abandon re-checks the row and
// leaves the resent attempt alone; pg-unconditional-settle abandons it,
// and the provider's charge then belongs to an abandoned attempt.
func TestReconciliationRacedByAResendKeepsTheResentAttempt(t *testing.T) {
	races := map[string]func(*Machine, models.PaymentAttempt){
		"reconcile": func(m *Machine, _ models.PaymentAttempt) { m.raceReconciliation(raceResend) },
		"reconcile-during-checkout": func(m *Machine, a models.PaymentAttempt) {
			m.resendAfterRead(a, "visa", []faults.Fault{{Kind: faults.KindPass}, {Kind: faults.KindSlowPastTotal, Delay: faults.SlowPastTotalDelay}})
		},
	}
	for name, race := range races {
		for _, store := range []string{StoreMemory, StorePostgres} {
			t.Run(name+"/"+store, func(t *testing.T) {
				assert.Nil(t, resendDuringReconciliation(t, store, "", race), "the reference's conditional abandon leaves the resent attempt alone")
				v := resendDuringReconciliation(t, store, "pg-unconditional-settle", race)
				require.NotNil(t, v, "the unconditional abandon overwrites the resent attempt")
				assert.Equal(t, check.BooksBalance, v.Invariant)
				assert.Contains(t, v.Message, "which the client marked Abandoned")
			})
		}
	}
}

func TestAMutantGetsTheStoreAndInstancesItNeeds(t *testing.T) {
	m, err := mutants.Lookup("pg-unconditional-settle")
	require.NoError(t, err)
	cfg, err := Config{Instances: 3}.WithDefaults()
	require.NoError(t, err)
	got := cfg.WithNeeds(&m)
	assert.Equal(t, StorePostgres, got.ClientStore)
	assert.Equal(t, 3, got.Instances, "more instances than the mutant needs are kept")
	cfg.Instances = 1
	assert.Equal(t, 2, cfg.WithNeeds(&m).Instances)
}

// TestCrashAtAPointLosesTheCallAndKeepsTheKey: the machine's crash at a
// checkout point kills the client there (the shopper never sees the
// answer), restarts it from the store, and the shopper's next checkout
// resends the stored key, on both stores.
func TestCrashAtAPointLosesTheCallAndKeepsTheKey(t *testing.T) {
	for _, store := range []string{StoreMemory, StorePostgres} {
		t.Run(store, func(t *testing.T) {
			cfg, err := Config{ClientStore: store}.WithDefaults()
			require.NoError(t, err)
			cfg, drop, err := cfg.PrepareStore(t.Context())
			require.NoError(t, err)
			defer drop()
			synctest.Test(t, func(t *testing.T) {
				w, err := NewWorld(cfg, nil)
				require.NoError(t, err)
				m := &Machine{w: w}
				o := w.openOrder("shopper", 5000, "TRY")
				m.crashAtPoint(o, "visa", client.PointRequestOut)
				h := w.hist.Snapshot()
				var crashes, lost int
				for _, op := range h.Ops {
					if op.Kind == models.OpCrash && op.Detail == string(client.PointRequestOut) && op.Returned {
						crashes++
					}
					if op.Kind == models.OpCheckout && op.Lost {
						lost++
					}
				}
				assert.Equal(t, 1, crashes, "one crash, at the point")
				assert.Equal(t, 1, lost, "the shopper never saw the answer")
				require.Equal(t, models.AttemptOpen, w.attempts()[0].Status, "the crashed client wrote no status")

				res := w.checkout(w.cli, "shopper", o, "visa")
				assert.Equal(t, checkout.Paid, res.Outcome, "the restarted client resends the stored key: a replay")
				snap, err := w.Snapshot()
				require.NoError(t, err)
				assert.Nil(t, check.Evaluate(snap, check.Safety()))
				w.clock.Advance(drainTime)
			})
		})
	}
}
