package check_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
)

// at places e's arrival and the provider's answer at the given sequence
// numbers and arrival time.
func at(e *models.Exchange, arrival, done int, arrived time.Time) {
	e.ArrivalSeq, e.ProviderSeq, e.ArrivedAt, e.ProviderDoneAt = arrival, done, arrived, arrived
}

// A request that met an unreachable store while the key was in flight is
// refused with 503: replay-consistent holds. Processed instead (no lock),
// it is caught.
func TestStoreDownRefusalIsNotAReplayViolation(t *testing.T) {
	for _, tc := range []struct {
		answer int
		holds  bool
	}{{503, true}, {201, false}} {
		f := newFixture()
		key := f.att.IdempotencyKey
		f.post(key, 201, "", 201, "ch_000001")
		f.post(key, tc.answer, "", tc.answer, "ch_000002")
		first, down := &f.w.History.Exchanges[0], &f.w.History.Exchanges[1] // post's pointer moves with the slice
		down.Fault = string(faults.KindStoreDown)
		at(first, 1, 4, t0)
		at(down, 2, 3, t0)
		v := check.Evaluate(f.w, []check.Invariant{invariant(t, check.ReplayConsistent)})
		if tc.holds {
			assert.Nil(t, v, "a 503 with the store down")
		} else if assert.NotNil(t, v, "processed with the store down while the key was in flight") {
			assert.Equal(t, check.ReplayConsistent, v.Invariant)
		}
	}
}

// A key whose provider process was killed holding it may answer 409 until
// the next time jump (the harness waits out the lease before it), and must
// be processed after it.
func TestKilledHolderKeyIsFreeAfterTheNextJump(t *testing.T) {
	for _, tc := range []struct {
		name       string
		afterJump  int // the provider's answer to a retry after the jump
		beforeJump int // and before it
		holds      bool
	}{
		{"reference", 201, 409, true},
		{"freed early", 201, 201, true},
		{"lock outlives the lease", 409, 409, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture()
			f.w.Killable = true
			key := f.att.IdempotencyKey
			f.post(key, 0, "reset", 503, "")
			f.post(key, tc.beforeJump, "", tc.beforeJump, "")
			f.post(key, tc.afterJump, "", tc.afterJump, "ch_000009")
			ex := f.w.History.Exchanges // post's pointer moves with the slice
			killed, before, after := &ex[0], &ex[1], &ex[2]
			killed.Fault = string(faults.KindProviderCrash)
			at(killed, 1, 2, t0)
			at(before, 3, 4, t0.Add(time.Second))
			f.w.History.Ops = append(f.w.History.Ops, models.Operation{ID: 2, Step: 2, Kind: models.OpAdvance,
				InvokedAt: t0.Add(2 * time.Second), Returned: true, ReturnedAt: t0.Add(time.Hour)})
			at(after, 5, 6, t0.Add(time.Hour+time.Second))
			if tc.beforeJump == 201 {
				after.ProviderBodyDigest, after.ProviderChargeID = before.ProviderBodyDigest, "" // its replay
			}
			v := check.Evaluate(f.w, []check.Invariant{invariant(t, check.ReplayConsistent)})
			if tc.holds {
				assert.Nil(t, v)
				return
			}
			require.NotNil(t, v)
			assert.Contains(t, v.Message, "a key no request was processing was answered 409")
		})
	}
}

func invariant(t *testing.T, name string) check.Invariant {
	t.Helper()
	for _, inv := range check.Safety() {
		if inv.Name == name {
			return inv
		}
	}
	t.Fatalf("no invariant %s", name)
	return check.Invariant{}
}
