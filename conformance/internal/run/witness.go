package run

import (
	"fmt"

	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
)

// chargesWitness is how a deviation's counterexample, found by another
// invariant than at-most-one-charge-per-order, breaks that one too (its
// provider truth holds two charges for one order), as a Deviation of it
// with the counterexample's verdict; ok is false when it does not. A run
// whose counterexample shows two charges must not say PASS for the
// invariant that forbids them (issue 24, item 6: a PASS never rests on
// evidence another verdict of the run reads as a failure).
func chargesWitness(n int, d reports.Deviation, charges []models.Charge) (reports.Deviation, bool) {
	if d.Invariant == check.AtMostOneChargePerOrder {
		return reports.Deviation{}, false
	}
	for _, inv := range check.Safety() {
		if inv.Name != check.AtMostOneChargePerOrder {
			continue
		}
		if f := inv.Check(check.World{Charges: charges}); !f.Holds() {
			return reports.Deviation{Invariant: inv.Name, Verdict: d.Verdict,
				Message: fmt.Sprintf("deviation %d's counterexample (%s) also shows %s", n, d.Invariant, f.Message)}, true
		}
	}
	return reports.Deviation{}, false
}

// witnessed adds what a deviation's counterexample shows of another
// invariant (chargesWitness): it judges that invariant as a deviation
// would, but is not one of the catalogue's (Deviations leaves it out).
func (s *Stats) witnessed(d reports.Deviation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.witnesses = append(s.witnesses, d)
}
