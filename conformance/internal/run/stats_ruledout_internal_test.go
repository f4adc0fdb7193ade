package run

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/reports"
)

// TestResultsShapesRuledOutByAReplayDeviation: equivalent-requests-agree
// judges shapes only under keys shown to replay, so against a provider
// that never replays (replay-consistent's deviation, here KNOWN) it has
// nothing to judge: NOT JUDGED with that reason, not "held vacuously"
// (INCONCLUSIVE), which no number of sequences mends. Regression (README
// walkthrough): a baseline listing every failure of replay-new-charge
// still ended INCONCLUSIVE, so exit 0 was out of reach; without such a
// deviation the vacuous verdict stays INCONCLUSIVE.
func TestResultsShapesRuledOutByAReplayDeviation(t *testing.T) {
	verdict := func(devs ...reports.Deviation) reports.InvariantResult {
		s := newStats(Config{})
		s.sequences = 105
		for _, inv := range append(check.Safety(), check.Liveness()...) {
			s.evals[inv.Name], s.subjects[inv.Name] = 10, 1
		}
		s.subjects[check.EquivalentRequestsAgree] = 0
		s.deviations = devs
		for _, r := range s.Results() {
			if r.Name == check.EquivalentRequestsAgree {
				return r
			}
		}
		t.Fatal("no result for equivalent-requests-agree")
		return reports.InvariantResult{}
	}
	r := verdict(reports.Deviation{Invariant: check.ReplayConsistent, Verdict: reports.Known, Message: "a retry of a completed key was answered anew"})
	assert.Equal(t, reports.NotJudged, r.Verdict)
	assert.Contains(t, r.Reason, "replay-consistent's deviation (known) left none in 105 sequences")
	assert.Equal(t, reports.Inconclusive, verdict().Verdict, "vacuous for lack of sequences: INCONCLUSIVE")
}
