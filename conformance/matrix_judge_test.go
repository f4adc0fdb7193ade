package conformance_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/sut/mutants"
)

// recorder is a judge that records the failures judgeKills reports.
type recorder struct{ errs []string }

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Helper()             {}
func (r *recorder) Logf(string, ...any) {}

// A mutant's Consequence is accepted first where byInvariant leaves room,
// and nothing else is: the kill matrix's real-store rows cannot hide a
// kill by an unrelated invariant behind it.
func TestJudgeKillsAcceptsOnlyTheConsequence(t *testing.T) {
	m := mutants.Mutant{Name: "m", Invariant: "books-balance", Consequence: "at-most-one-charge-per-order", MinSteps: 3}
	seeds := []string{"1", "2", "3", "4", "5"}
	kills := func(third ...string) []kill {
		var ks []kill
		for i := range seeds {
			k := kill{failed: true, invariant: m.Invariant, steps: 3}
			if i >= 2 && i-2 < len(third) {
				k.invariant = third[i-2]
			}
			ks = append(ks, k)
		}
		return ks
	}
	for _, c := range []struct {
		name   string
		others []string
		fails  bool
	}{
		{"all on the invariant", nil, false},
		{"one seed on the consequence", []string{m.Consequence}, false},
		{"two seeds on the consequence", []string{m.Consequence, m.Consequence}, true},
		{"one seed on another invariant", []string{"one-key-per-intent"}, true},
	} {
		r := &recorder{}
		judgeKills(r, m, seeds, kills(c.others...), len(seeds)-1, 1)
		assert.Equal(t, c.fails, len(r.errs) > 0, "%s: %v", c.name, r.errs)
	}
}
