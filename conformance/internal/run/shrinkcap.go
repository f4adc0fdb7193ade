package run

import (
	"fmt"
	"strings"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/conformance/internal/machine"
	"github.com/idemcheck/idemcheck/reports"
)

// One catalogue per run (issue 24, item 2). Against a URL, what a run
// already knows is not shrunk again, and every shrink is bounded:
//
//   - A deviation is known when the baseline lists it, or when a
//     requirement of the same certification FAILed on its invariant
//     (Shown, from shownBy): the requirement's evidence and curl script
//     are already its minimal reproduction. rapid reproduces it once, the
//     run tries its shortest shapes (shapes.go) within the floor below,
//     and ends its shrink there (shrinkEnd): rapid does not shrink it. It
//     is reported "not minimal: known (…)", its verdict FAIL unless the
//     baseline lists it.
//   - Any other deviation may spend machine.DeviationShrinkShare of each
//     budget, and at most machine.DeviationShrinkTime, after its
//     reproduction (machine.ShrinkCap), but never less than
//     shrinkFloorRequests requests and shrinkFloorCreates creates, so that
//     a small budget is what cuts a small run's shrink.
//   - A deviation once recorded is acknowledged for the rest of the run:
//     its shrunk category, and the category its round found it by (rapid
//     accepts a smaller sequence failing at the same place with another
//     message), so that no later round finds and shrinks it again.
//
// The reproduction, the first check after the round's violation, always
// runs whole and persisted: the fail file holds draws that fail, whatever
// cuts the shrink later (remember keeps only a check rapid recorded).

// shrinkFloorRequests and shrinkFloorCreates are the least a deviation's
// shrink cap allows, whatever the share of a small budget gives: some
// twenty attempts of a 2–3 step sequence.
const (
	shrinkFloorRequests = 100
	shrinkFloorCreates  = 50
)

// shownBy lists, per requirement id, the invariants whose violations the
// property would show for the same cause: a requirement FAIL makes them
// known to the property of the same run (Shown).
var shownBy = map[string][]string{
	certify.ReqReplay:           {check.ReplayConsistent},
	certify.ReqMismatch:         {check.MismatchRejected},
	certify.ReqConcurrent:       {check.ReplayConsistent, check.AtMostOneChargePerOrder},
	certify.ReqLostResponse:     {check.ReplayConsistent, check.AtMostOneChargePerOrder},
	certify.ReqHangUp:           {check.ReplayConsistent, check.AtMostOneChargePerOrder},
	certify.ReqRetries:          {check.ReplayConsistent, check.AtMostOneChargePerOrder},
	certify.ReqQuotedKey:        {check.ReplayConsistent},
	certify.ReqShapes:           {check.EquivalentRequestsAgree},
	certify.ReqCrossAccount:     {check.KeyScopedPerAccount},
	certify.ReqRefundReplay:     {check.AtMostOneRefundPerIntent},
	certify.ReqEndpointScope:    {check.KeyScopedPerEndpoint},
	certify.ReqDeclinedKey:      {check.MismatchRejected, check.ReplayConsistent},
	certify.ReqInflightMismatch: {check.ReplayConsistent, check.AtMostOneChargePerOrder},
}

// Shown is what the requirements of a certification showed, for its
// property: an invariant's name → the first requirement that FAILed (or
// was KNOWN by the baseline) on it.
type Shown map[string]string

// ShownBy is what the requirement results rs show (shownBy), in their
// order.
func ShownBy(rs []reports.RequirementResult) Shown {
	out := Shown{}
	for _, r := range rs {
		if r.Verdict != reports.Fail && r.Verdict != reports.Known {
			continue
		}
		for _, inv := range shownBy[r.ID] {
			if _, ok := out[inv]; !ok {
				out[inv] = r.ID
			}
		}
	}
	return out
}

// knownWhy is why v is known before its shrink, as the cut's reason: the
// baseline lists it, or a requirement showed its invariant; "" when not.
func (r *runState) knownWhy(v *check.ViolationError) string {
	switch {
	case r.cfg.Baseline.Knows(v):
		return machine.KnownCut + " (listed in the baseline): not shrunk again"
	case r.cfg.Shown[v.Invariant] != "":
		return fmt.Sprintf("%s (requirement %s FAILed on %s in this run): not shrunk again", machine.KnownCut, r.cfg.Shown[v.Invariant], v.Invariant)
	}
	return ""
}

// used is what the run's provider at a URL has used: requests and creates;
// ok false when it is not metered.
func (r *runState) used() (requests, creates int, ok bool) {
	if r.cfg.Remote == nil {
		return 0, 0, false
	}
	requests, creates = r.cfg.Remote.Meter().Used()
	return requests, creates, true
}

// reproduced bounds round's shrink once check m, its reproduction (the
// round's first shrink check), ended: a known deviation's is cut there,
// another's gets its ShrinkCap. In process nothing is bounded, nor a
// fail file rapid replayed (rapid does not shrink it). r.mu is held.
func (r *runState) reproduced(m *machine.Machine) {
	rd := &r.round
	if rd.shrinks != 1 || rd.found == nil || rd.cut != "" || rd.replayed {
		return
	}
	from, ok := machine.SpendNow(m.World().Provider())
	if !ok {
		return
	}
	share, floor := machine.DeviationShrinkShare, 0.0
	if l := r.cfg.Remote.Config().Limits; l.MaxRequests > 0 && l.MaxCharges > 0 {
		floor = max(float64(shrinkFloorRequests)/float64(l.MaxRequests), float64(shrinkFloorCreates)/float64(l.MaxCharges))
	}
	if rd.known != "" {
		// Only its shortest shapes, within the floor (shapes.go); then cut.
		rd.cap = &machine.ShrinkCap{From: from, Share: floor, Time: machine.DeviationShrinkTime, Why: rd.known}
		return
	}
	rd.cap = &machine.ShrinkCap{From: from, Share: max(share, floor), Time: machine.DeviationShrinkTime,
		Why: fmt.Sprintf("%s %.0f%% of each budget and at most %s", machine.DeviationCut, machine.DeviationShrinkShare*100, machine.DeviationShrinkTime)}
}

// shrinkSpend is what round rd's reproduction and shrink spent until now.
func (r *runState) shrinkSpend(rd round) *reports.ShrinkSpend {
	req, creates, ok := r.used()
	if !ok {
		return nil
	}
	return &reports.ShrinkSpend{Attempts: rd.shrinks - rd.ended + rd.shapeTries, Requests: req - rd.fromRequests, Charges: creates - rd.fromCreates}
}

// acknowledge makes rd's deviation known for the rest of the run: its
// shrunk category and the one it was found by. r.mu is held.
func (r *runState) acknowledge(rd round) {
	for _, v := range []*check.ViolationError{rd.smallestV, rd.found} {
		if v != nil {
			r.ack[v.Category] = true
		}
	}
}

// shrinkTotal is the sum of the deviations' shrink spend.
func shrinkTotal(devs []reports.Deviation) reports.ShrinkSpend {
	var out reports.ShrinkSpend
	for _, d := range devs {
		if d.Shrink != nil {
			out = out.Add(*d.Shrink)
		}
	}
	return out
}

// keepsDraws reports whether a failing check of phase ph with draws bits
// may become the round's smallest counterexample: against a URL (remote:
// the catalogue, whose shrinks the run cuts), during a shrink, only a
// check rapid recorded (bits), so that the fail file's draws are those of
// the world reported; a check rapid did not record (its first run of a
// candidate) is run again, recorded, when rapid keeps it. Elsewhere every
// check counts, as rapid's own fail file is the one reported.
func keepsDraws(remote bool, ph machine.Phase, bits []uint64) bool {
	return !remote || ph != machine.PhaseShrink || bits != nil
}

// budgetCut reports whether cut, why a round's shrink ended early, is a
// budget of the run running out, not the run's own choice (a known
// deviation, a deviation's cap, a shape found): a reproducibility check
// then has nothing to replay with.
func budgetCut(cut string) bool {
	for _, own := range []string{machine.KnownCut, machine.DeviationCut, shortestShape} {
		if strings.HasPrefix(cut, own) {
			return false
		}
	}
	return cut != ""
}

// endOfShrink is shrinkEnd, telling Config.OnShrinkEnd once, at the
// first check that ends the shrink, what the shrink ended at and why.
func (r *runState) endOfShrink(ph machine.Phase) *check.ViolationError {
	v := r.shrinkEnd(ph)
	if v == nil || r.cfg.OnShrinkEnd == nil {
		return v
	}
	r.mu.Lock()
	first, inv, steps, cut := r.round.ended == 1, r.round.smallest.Invariant, len(r.round.smallest.History.Steps), r.round.cut
	r.mu.Unlock()
	if first {
		r.cfg.OnShrinkEnd(inv, steps, cut)
	}
	return v
}
