package run

import (
	"fmt"
	"os"
	"reflect"
	"strings"

	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/conformance/internal/machine"
	"pgregory.net/rapid"
)

// Ending a shrink that a budget cut. Once a check of a round's shrink
// stopped without a verdict (a budget of a run against a URL is spent, or
// the share a known deviation's shrink may spend: round.cut), no later
// check can judge anything, yet rapid's shrinker would go on drawing every
// candidate of its pass — tens of thousands against a long
// counterexample, each kept in its cache of tried candidates — until its
// shrink time (issue 22: 40,000–157,000 candidates, 1.7 GB). rapid
// (v1.3.0, shrink.go) ends a shrink at once only when a candidate fails
// first at the place of the round's failure and then, run again, with
// another message ("flaky"): it then stops and reports that second
// error. So after a cut every check runs nothing and fails at Conclude:
// the first with a message of its own (rapid takes the candidate as
// failing, since it compares only where it failed), every later one with
// the round's failure, word for word — rapid's verdict keeps the round's
// message. rapid saves that last candidate, which drew nothing, as the
// fail file; record puts the smallest counterexample's draws in it
// (keepSmallest), read from rapid's T as it failed (drawnBits).
//
// The check that was cut itself stopped mid-sequence: it fails too, as
// the first of those checks (realTime), never passes. Passing, it would
// end rapid's shrink with no error to report when it was rapid's second
// run of a candidate (rapid v1.3.0 then panics with nil); failing, when it
// was that second run, rapid ends the shrink and saves its partial draws,
// which replay nothing: so once a shrink was cut, the fail file's draws
// are always replaced by the smallest counterexample's (keepSmallest).

// shrinkEnd is what check of phase ph must fail with, at once, because
// its round's shrink was cut; nil when it runs as usual.
func (r *runState) shrinkEnd(ph machine.Phase) *check.ViolationError {
	if ph != machine.PhaseShrink {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	rd := &r.round
	if rd.cut == "" && rd.found != nil && r.lane.takenByOther(rd.found.Category) {
		rd.cut = takenCut // another lane shrinks it (concurrent.go)
	}
	if rd.cut == "" || rd.smallestV == nil {
		return nil
	}
	rd.ended++
	v := *rd.smallestV
	if rd.ended == 1 {
		v.Category += " (the shrink ends: " + rd.cut + ")"
	}
	v.Message = ""
	return &v
}

// drawnBits is what rapid's t has drawn so far, when rapid records it (a
// check that reproduces or shrinks a failure), else nil. rapid keeps it
// unexported (T.s, a bitStream embedding recordedBits.data) and
// reflect reads it, as written by pgregory.net/rapid v1.3.0; a rapid
// that keeps it otherwise gives nil, the fail file is then dropped rather
// than wrong, and TestShrinkCutByTheBudgetKeepsMemoryFlat fails.
func drawnBits(t *rapid.T) []uint64 {
	v, ok := recorded(t)
	if !ok {
		return nil
	}
	d := v.FieldByName("data")
	if !d.IsValid() || d.Kind() != reflect.Slice || d.Type().Elem().Kind() != reflect.Uint64 || d.Len() == 0 {
		return nil
	}
	out := make([]uint64, d.Len())
	for i := range out {
		out[i] = d.Index(i).Uint()
	}
	return out
}

// recorded is the bit stream of rapid's t (T.s, a struct embedding
// recordedBits), as reflect reads it; ok false when t has none.
func recorded(t *rapid.T) (reflect.Value, bool) {
	v := reflect.ValueOf(t).Elem().FieldByName("s")
	if !v.IsValid() || v.Kind() != reflect.Interface || v.IsNil() {
		return reflect.Value{}, false
	}
	if v = v.Elem(); v.Kind() != reflect.Pointer || v.IsNil() {
		return reflect.Value{}, false
	}
	return v.Elem(), true
}

// keepSmallest makes a fail file rapid saved for a shrink the run cut
// (cut) — the last candidate, which drew nothing or stopped mid-sequence —
// hold bits, the draws of the smallest counterexample; rapid's own lines
// (its version and seed, the comments) stay. A fail file of a shrink not
// cut, with draws, is rapid's verdict as usual and is left as it is. It
// returns the fail file to report, "" when there is none or it cannot hold
// bits (it is then removed: its draws would replay nothing, or another
// sequence than the one reported).
func keepSmallest(ff string, bits []uint64, cut bool) string {
	if ff == "" {
		return ""
	}
	b, err := os.ReadFile(ff)
	if err != nil {
		return ff // rapid's, as rapid named it
	}
	var out []string
	header, draws := "", 0
	for line := range strings.SplitSeq(string(b), "\n") {
		switch t := strings.TrimSpace(line); {
		case t == "" || strings.HasPrefix(t, "#"):
			out = append(out, line)
		case header == "":
			header = t // "<rapid version>#<seed>"; rapid's draws follow it
		default:
			draws++
		}
	}
	switch {
	case draws > 0 && !cut:
		return ff
	case header == "" || bits == nil:
		removeFailFile(ff)
		return ""
	}
	out = append(out, "# idemcheck: the draws of the smallest counterexample found before the shrink was cut", header)
	for _, u := range bits {
		out = append(out, fmt.Sprintf("0x%x", u))
	}
	if err := os.WriteFile(ff, []byte(strings.Join(out, "\n")), 0o644); err != nil {
		removeFailFile(ff)
		return ""
	}
	return ff
}
