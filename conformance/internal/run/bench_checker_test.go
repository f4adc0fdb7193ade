package run

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"

	"pgregory.net/rapid"

	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/conformance/internal/machine"
)

// BenchmarkCheckerStep is the safety invariants' verdict after one step,
// over a history of about 10, 100 and 1000 wire exchanges: "step" is what
// machine.check runs (check.Checker.Step, primed with the history before
// the steps, untimed, judging what each step added), "whole" the whole
// history read again (check.Evaluate, the final verdict and the test
// oracle). The histories are real: the reference client and the embedded
// provider under drawn faults (rapid seed 1, one long sequence of up to
// 1000 orders): the snapshot after the first step after which the
// history holds at least that many exchanges, and the checkerRun
// snapshots of the steps that follow it, each with the models.Delta of
// its step, as the property hands them over. A "step" op is the mean
// over those steps: a sequence pays a step's share of the Checker's
// indices growing (a map that doubles), not the whole of it at whichever
// step crosses a size, so one step alone measures where its history
// happens to fall, not its length. "whole" judges the last of them.
// Metrics: ns/op per verdict, exchanges (the last history's length),
// ns/exchange. An incremental checker is flat in the history's length.
func BenchmarkCheckerStep(b *testing.B) {
	worlds := checkerWorlds(b)
	for _, n := range checkerLengths {
		seq := worlds[n]
		w := seq[len(seq)-1]
		ex := len(w.History.Exchanges)
		b.Run(fmt.Sprintf("step/exchanges=%d", n), func(b *testing.B) {
			var allocs, steps uint64
			var before, after runtime.MemStats
			for b.Loop() {
				b.StopTimer()
				c := check.NewChecker(check.Safety())
				if v := c.Step(seq[0]); v != nil {
					b.Fatalf("the reference's history violates %s: %s", v.Invariant, v.Message)
				}
				runtime.ReadMemStats(&before)
				b.StartTimer()
				for _, w := range seq[1:] {
					if v := c.Step(w); v != nil {
						b.Fatalf("the reference's history violates %s: %s", v.Invariant, v.Message)
					}
				}
				b.StopTimer()
				runtime.ReadMemStats(&after)
				allocs += after.Mallocs - before.Mallocs
				steps += uint64(len(seq) - 1)
				b.StartTimer()
			}
			perStep := float64(b.Elapsed().Nanoseconds()) / float64(steps)
			b.ReportMetric(0, "ns/op") // replaced by the mean step's
			b.ReportMetric(perStep, "ns/op")
			b.ReportMetric(float64(allocs)/float64(steps), "allocs/step")
			b.ReportMetric(float64(ex), "exchanges")
			b.ReportMetric(perStep/float64(ex), "ns/exchange")
		})
		b.Run(fmt.Sprintf("whole/exchanges=%d", n), func(b *testing.B) {
			if v := check.Evaluate(w, check.Safety()); v != nil {
				b.Fatalf("the reference's history violates %s: %s", v.Invariant, v.Message)
			}
			b.ReportAllocs()
			for b.Loop() {
				check.Evaluate(w, check.Safety())
			}
			b.ReportMetric(float64(ex), "exchanges")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(ex), "ns/exchange")
		})
	}
}

// checkerLengths are the history lengths of BenchmarkCheckerStep, in
// exchanges; checkerRun is how many steps after each a "step" op judges.
var checkerLengths = []int{10, 100, 1000}

const checkerRun = 16

var (
	checkerOnce  sync.Once
	checkerBuilt map[int][]check.World
	checkerErr   string
)

// checkerWorlds builds the Worlds of BenchmarkCheckerStep once per
// process (-count runs it again), by running the reference: one drawn
// sequence of ~30,000 steps on average, whose every step records, instead
// of checking the invariants, a snapshot at each length of checkerLengths
// it passes; once the last is taken the rest of the sequence does nothing.
// rapid's step count is geometric: a sequence too short for the last
// length is followed by the next seed's.
func checkerWorlds(b *testing.B) map[int][]check.World {
	checkerOnce.Do(func() {
		withRapid(b, map[string]string{"rapid.checks": "20", "rapid.steps": "30000", "rapid.seed": "1"})
		checkerBuilt = map[int][]check.World{}
		ok, out := inTest(b, "checkerWorlds", func(t *testing.T) {
			r := benchRun(t, Config{Config: machine.Config{MaxOrders: 1000}})
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
	m := r.bubbleMachine(t, nil, machine.PhaseSearch, nil)
	actions := m.Actions()
	var prev check.World                // the snapshot after the step before
	building := map[int][]check.World{} // this sequence's, until checkerRun steps follow
	actions[""] = func(*rapid.T) {
		if m.Stopped() != "" {
			return
		}
		m.World().Settle()
		s, err := m.World().StepSnapshot() // as machine.check reads it: the history's Delta says what the step added
		if err != nil {
			t.Fatal(err)
		}
		s.History = s.History.Clone()
		s.Orders, s.Attempts, s.RefundIntents = slices.Clone(s.Orders), slices.Clone(s.Attempts), slices.Clone(s.RefundIntents)
		if s.State != nil { // the machine's, overwritten at the next step
			d := *s.State
			d.Orders, d.Attempts, d.RefundIntents = slices.Clone(d.Orders), slices.Clone(d.Attempts), slices.Clone(d.RefundIntents)
			s.State = &d
		}
		for _, want := range checkerLengths {
			if _, done := checkerBuilt[want]; done || prev.History.Exchanges == nil {
				continue
			}
			seq, started := building[want]
			switch {
			case started:
				building[want] = append(seq, s)
			case len(s.History.Exchanges) >= want:
				building[want] = []check.World{prev, s}
			}
			if len(building[want]) == checkerRun+1 {
				checkerBuilt[want] = building[want]
			}
		}
		prev = s
		if len(checkerBuilt) == len(checkerLengths) {
			m.Halt("every history is built") // the remaining actions do nothing (machine.live)
		}
	}
	t.Repeat(actions)
}
