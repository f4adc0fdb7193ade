package run

import (
	"flag"
	"io"
	"testing"

	"github.com/idemcheck/idemcheck/conformance/internal/machine"
	"pgregory.net/rapid"
)

// Replaying a cut shrink's counterexample once, for its draws. rapid logs
// the draws of a failure (its "Failed test output", which a certification
// keeps in rapid.log and -v prints) by running the failing sequence once
// more at the end of its check; when the run ended the shrink (a known
// deviation, a deviation's cap, a budget: shrinkEnd), that last run draws
// nothing, so the log held no step of the counterexample reported. Once
// record has put the smallest counterexample's draws in the fail file,
// logReplay runs rapid on that file alone: rapid replays it twice before
// its output run (checkFailFile), and those two checks end at once
// (replayCheck); the output run is one real sequence, whose draws rapid
// logs, and which says whether the fail file fails again.

// logReplayState is the replay under way: how many checks it began, and
// whether its real sequence failed again with the round's category.
type logReplayState struct {
	calls  int
	failed bool
}

// replayTB is the TB of a log replay: a round's, under another name, so
// that rapid replays no fail file kept under the test's own name.
type replayTB struct {
	*roundTB
	name string
}

func (tb replayTB) Name() string { return tb.name }

// logReplay replays round rd's fail file ff once for its draws (see
// above) and reports whether it failed again with rd's category. t is the
// test the round ran under.
func (r *runState) logReplay(t *testing.T, rd round, ff string) (again bool) {
	if ff == "" || rd.smallestV == nil {
		return false
	}
	r.mu.Lock()
	r.replay = &logReplayState{}
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		again, r.replay = r.replay.failed, nil
		r.mu.Unlock()
	}()
	replayFailFile(replayTB{roundTB: &roundTB{T: t}, name: t.Name() + "/replay"}, ff, r.Property())
	return // again: set by the deferred read of r.replay
}

// checkRound is rapid.Check of prop under tb, a round's TB, whose failure
// (its FailNow) ends the check, not the test.
func checkRound(tb rapid.TB, prop func(*rapid.T)) {
	defer func() {
		if p := recover(); p != nil && p != errRoundFailed {
			panic(p)
		}
	}()
	rapid.Check(tb, prop)
}

// replayFailFile is checkRound replaying the fail file ff alone: no
// search check after it. rapid writes no fail file of its own when the
// one it replays fails again (it names ff), so the flags that say so are
// only those rapid reads at its start, set under rapidFlagsMu: another
// lane's round in flight never starts under them (checkUnderFlags).
func replayFailFile(tb rapid.TB, ff string, prop func(*rapid.T)) {
	defer func() {
		if p := recover(); p != nil && p != errRoundFailed {
			panic(p)
		}
	}()
	checkUnderFlags(tb, map[string]string{"rapid.failfile": ff, "rapid.checks": "0"}, prop)
}

// plainSequence runs one sequence in real time for check c, outside the
// round's accounting (a log replay, a shape), and returns its machine.
func (r *runState) plainSequence(t *rapid.T, c machine.Check) *machine.Machine {
	w, err := machine.NewWorld(r.cfg.Config, r.mutant)
	if err != nil {
		t.Fatal(err)
	}
	if cl, ok := w.Provider().(io.Closer); ok {
		t.Cleanup(func() { _ = cl.Close() })
	}
	defer w.Close()
	m := machine.New(w, c)
	t.Repeat(m.Actions())
	m.Finish()
	return m
}

// replayCheck is what check t of a log replay runs, ok false when no log
// replay is under way: rapid's two replays of the fail file end at once
// with the round's violation; its output run is the sequence, run whole,
// with no cap, not counted.
func (r *runState) replayCheck(t *rapid.T) (ok bool) {
	r.mu.Lock()
	lr, rd := r.replay, r.round
	if lr != nil {
		lr.calls++
	}
	r.mu.Unlock()
	if lr == nil {
		return false
	}
	c := machine.Check{Phase: machine.PhaseShrink, Ack: r.acknowledged(), Stop: &r.stop, Report: r.check(machine.PhaseShrink).Report}
	if lr.calls <= 2 {
		machine.Ended(c, rd.smallestV).Conclude(t)
		return true
	}
	m := r.plainSequence(t, c)
	if v, _ := m.Failed(); v != nil && v.Category == rd.smallestV.Category {
		r.mu.Lock()
		lr.failed = true
		r.mu.Unlock()
	}
	m.Conclude(t)
	return true
}

// setFlags sets each named flag to its value for one call, and returns
// what puts them back.
func setFlags(t *testing.T, set map[string]string) func() {
	var undo []func()
	for name, v := range set {
		f := flag.Lookup(name)
		if f == nil {
			continue
		}
		old := f.Value.String()
		if err := f.Value.Set(v); err != nil {
			t.Fatal(err)
		}
		undo = append(undo, func() { _ = f.Value.Set(old) })
	}
	return func() {
		for _, u := range undo {
			u()
		}
	}
}
