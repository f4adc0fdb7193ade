package run

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/reports"
)

// TestResultsVacuousIsInconclusive: an invariant evaluated in every step
// but whose subject never occurred (no key reused with another body, as
// against a URL with the reference client) is INCONCLUSIVE on the
// certification page, not PASS. Regression: it was PASS "over 0 reused
// keys with another body".
func TestResultsVacuousIsInconclusive(t *testing.T) {
	s := newStats(Config{})
	s.sequences = 3
	for _, inv := range append(check.Safety(), check.Liveness()...) {
		s.evals[inv.Name] = 10
		s.subjects[inv.Name] = 2
	}
	s.subjects[check.MismatchRejected] = 0
	for _, r := range s.Results() {
		if r.Name == check.MismatchRejected {
			assert.Equal(t, reports.Inconclusive, r.Verdict)
			assert.Equal(t, "held vacuously: no reused keys with another body in 3 sequences", r.Reason)
			continue
		}
		assert.Equal(t, reports.Pass, r.Verdict, r.Name)
	}
}
