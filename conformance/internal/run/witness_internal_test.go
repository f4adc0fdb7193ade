package run

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
)

// TestResultsAtMostOneChargeNotPassBesideTwoCharges: a deviation found by
// another invariant whose counterexample holds two charges for one order
// makes at-most-one-charge-per-order FAIL (KNOWN when the deviation is),
// naming the deviation; a counterexample with one charge per order leaves
// it PASS. Regression (issue 24, item 6): the page said PASS for it beside
// a counterexample holding two charges.
func TestResultsAtMostOneChargeNotPassBesideTwoCharges(t *testing.T) {
	verdict := func(v reports.Verdict, charges ...models.Charge) reports.InvariantResult {
		s := newStats(Config{})
		s.sequences = 100
		for _, inv := range append(check.Safety(), check.Liveness()...) {
			s.evals[inv.Name], s.subjects[inv.Name] = 10, 1
		}
		d := reports.Deviation{Invariant: check.ReplayConsistent, Verdict: v, Message: "a retry of a completed key was answered anew"}
		s.deviation(d)
		if w, ok := chargesWitness(2, d, charges); ok {
			s.witnessed(w)
		}
		for _, r := range s.Results() {
			if r.Name == check.AtMostOneChargePerOrder {
				return r
			}
		}
		t.Fatal("no result for at-most-one-charge-per-order")
		return reports.InvariantResult{}
	}
	two := []models.Charge{
		{ID: "ch_000001", Status: "succeeded", MerchantReference: "bookstore-1001-0123456789abcdef0123456789abcdef"},
		{ID: "ch_000002", Status: "succeeded", MerchantReference: "bookstore-1001-0123456789abcdef0123456789abcdef"},
	}
	r := verdict(reports.Fail, two...)
	assert.Equal(t, reports.Fail, r.Verdict, r.Reason)
	assert.Equal(t, "deviation 2's counterexample (replay-consistent) also shows at-most-one-charge-per-order: the provider holds 2 charges for order 1001 (ch_000001, ch_000002)", r.Reason)
	assert.Equal(t, reports.Known, verdict(reports.Known, two...).Verdict)
	assert.Equal(t, reports.Pass, verdict(reports.Fail, two[0]).Verdict, "one charge: nothing shown")
	assert.Len(t, func() []reports.Deviation {
		s := newStats(Config{})
		s.witnessed(reports.Deviation{Invariant: check.AtMostOneChargePerOrder})
		return s.Deviations()
	}(), 0, "a witness is no deviation of the catalogue")
}
