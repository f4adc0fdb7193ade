package conformance

import (
	"fmt"
	"sync"
	"testing"

	"pgregory.net/rapid"
)

// BenchmarkCheckerStep is one evaluation of the safety invariants after a
// step (evaluate(World, Safety()), what machine.check runs), over a
// history of about 10, 100 and 1000 wire exchanges. The histories are
// real: the reference client and the embedded provider under drawn faults
// (rapid seed 1, one long sequence of up to 1000 orders), each World the
// snapshot taken at the first step after which the history holds at least
// that many exchanges. Metrics: ns/op per evaluation, exchanges (the
// history's actual length), ns/exchange. An incremental checker is flat
// in the history's length; this one (the whole history read again) is
// not. It reads only this package's evaluate and Safety, so it can be
// pointed at another checker in one place.
func BenchmarkCheckerStep(b *testing.B) {
	worlds := checkerWorlds(b)
	for _, n := range checkerLengths {
		w := worlds[n]
		ex := len(w.History.Exchanges)
		b.Run(fmt.Sprintf("exchanges=%d", n), func(b *testing.B) {
			if v := evaluate(w, Safety()); v != nil {
				b.Fatalf("the reference's history violates %s: %s", v.Invariant, v.Message)
			}
			b.ReportAllocs()
			for b.Loop() {
				evaluate(w, Safety())
			}
			b.ReportMetric(float64(ex), "exchanges")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(ex), "ns/exchange")
		})
	}
}

// checkerLengths are the history lengths of BenchmarkCheckerStep, in
// exchanges.
var checkerLengths = []int{10, 100, 1000}

var (
	checkerOnce  sync.Once
	checkerBuilt map[int]World
	checkerErr   string
)

// checkerWorlds builds the Worlds of BenchmarkCheckerStep once per
// process (-count runs it again), by running the reference: one drawn
// sequence of ~30,000 steps on average, whose every step records, instead
// of checking the invariants, a snapshot at each length of checkerLengths
// it passes; once the last is taken the rest of the sequence does nothing.
// rapid's step count is geometric: a sequence too short for the last
// length is followed by the next seed's.
func checkerWorlds(b *testing.B) map[int]World {
	checkerOnce.Do(func() {
		withRapid(b, map[string]string{"rapid.checks": "20", "rapid.steps": "30000", "rapid.seed": "1"})
		checkerBuilt = map[int]World{}
		ok, out := inTest(b, "checkerWorlds", func(t *testing.T) {
			r := benchRun(t, Config{MaxOrders: 1000})
			rapid.Check(t, func(t *rapid.T) {
				if len(checkerBuilt) == len(checkerLengths) {
					return
				}
				rapid.SyncTest(t, func(t *rapid.T) { captureWorlds(t, r) })
			})
		})
		if !ok || len(checkerBuilt) < len(checkerLengths) {
			checkerErr = fmt.Sprintf("built %d of %d histories:\n%s", len(checkerBuilt), len(checkerLengths), out)
		}
	})
	if checkerErr != "" {
		b.Fatal(checkerErr)
	}
	return checkerBuilt
}

// captureWorlds is one sequence of checkerWorlds, in a bubble.
func captureWorlds(t *rapid.T, r *runState) {
	w, err := newWorld(r.cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := r.newMachine(w, phaseSearch)
	t.Cleanup(func() {
		m.w.faults.Heal()
		m.w.clock.Advance(drainTime)
		m.w.drainHung()
	})
	actions := m.actions()
	every := 1 // steps between two looks at the history's length
	actions[""] = func(*rapid.T) {
		if m.stopped != "" || m.steps%every != 0 {
			return
		}
		m.w.clock.Settle()
		n := len(m.w.hist.Snapshot().Exchanges)
		if n >= checkerLengths[0]*10 {
			every = 8 // a copy of a long history is dear; overshoot a few exchanges
		}
		for _, want := range checkerLengths {
			if _, done := checkerBuilt[want]; done || n < want {
				continue
			}
			s, err := m.w.snapshot()
			if err != nil {
				t.Fatal(err)
			}
			checkerBuilt[want] = s
		}
		if len(checkerBuilt) == len(checkerLengths) {
			m.stopped = "every history is built" // the remaining actions do nothing (machine.live)
		}
	}
	t.Repeat(actions)
}
