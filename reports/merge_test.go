package reports_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/reports"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writePart records a property run under dir, as a run does.
func writePart(t *testing.T, dir string, started time.Time, verdict reports.Verdict, invs ...reports.InvariantResult) {
	t.Helper()
	folder, err := reports.WriteRunSummary(dir, started, "TestConformance", "idemcheck: 1 sequences", verdict, map[bool]string{true: "a budget ran out"}[verdict == reports.Inconclusive])
	require.NoError(t, err)
	require.NoError(t, reports.WriteRunStats(folder, reports.RunStats{Test: "TestConformance", Verdict: verdict, Started: started,
		Coverage: reports.Coverage{Sequences: 1, Steps: 3, Exchanges: 2, Faults: map[string]int{"reset": 1}}, Invariants: invs}))
}

// TestMergedInvariantVerdicts: an invariant held vacuously in one part but
// seen in another passes the merge; one failed in any part fails it; one
// no part judged stays NOT JUDGED; one a budget-stopped part left
// INCONCLUSIVE stays so; and the merge's verdict is the worst of the
// parts' and the merged invariants'.
func TestMergedInvariantVerdicts(t *testing.T) {
	in := t.TempDir()
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	vac := func(name string) reports.InvariantResult {
		return reports.InvariantResult{Name: name, Verdict: reports.Inconclusive, Evaluations: 3, Reason: "held vacuously"}
	}
	pass := func(name string) reports.InvariantResult {
		return reports.InvariantResult{Name: name, Verdict: reports.Pass, Evaluations: 3, Subjects: 2}
	}
	nj := reports.InvariantResult{Name: "nj", Verdict: reports.NotJudged, Reason: "no second key"}
	writePart(t, filepath.Join(in, "a"), at, reports.Pass, vac("seen"), pass("failed"), nj, vac("never"))
	writePart(t, filepath.Join(in, "b"), at.Add(time.Second), reports.Pass, pass("seen"),
		reports.InvariantResult{Name: "failed", Verdict: reports.Fail, Evaluations: 1, Subjects: 1, Reason: "two charges"}, nj, vac("never"))
	m, err := reports.MergeRuns(filepath.Join(in, "out"), []string{filepath.Join(in, "a"), filepath.Join(in, "b")}, at.Add(time.Minute))
	require.NoError(t, err)
	got := map[string]reports.InvariantResult{}
	for _, i := range m.Stats.Invariants {
		got[i.Name] = i
	}
	assert.Equal(t, reports.Pass, got["seen"].Verdict)
	assert.Equal(t, 6, got["seen"].Evaluations)
	assert.Equal(t, 2, got["seen"].Subjects)
	assert.Equal(t, reports.Fail, got["failed"].Verdict)
	assert.Contains(t, got["failed"].Reason, "two charges")
	assert.Equal(t, reports.NotJudged, got["nj"].Verdict)
	assert.Equal(t, reports.Inconclusive, got["never"].Verdict, "vacuous in every part")
	assert.Equal(t, reports.Coverage{Sequences: 2, Steps: 6, Exchanges: 4, Faults: map[string]int{"reset": 2}}, m.Stats.Coverage)
	assert.Equal(t, reports.Fail, m.Verdict, "the parts' run.json said PASS, but b's statistics hold a FAIL: the merge fails (breaker: it said PASS beside a FAIL row)")

	writePart(t, filepath.Join(in, "c"), at.Add(2*time.Second), reports.Inconclusive, pass("seen"),
		reports.InvariantResult{Name: "stopped", Verdict: reports.Inconclusive, Evaluations: 3, Subjects: 2, Reason: "the run stopped early"})
	m, err = reports.MergeRuns(filepath.Join(in, "out2"), []string{filepath.Join(in, "a"), filepath.Join(in, "c")}, at.Add(time.Minute))
	require.NoError(t, err)
	assert.Equal(t, reports.Inconclusive, m.Verdict)
	for _, i := range m.Stats.Invariants {
		if i.Name == "stopped" {
			assert.Equal(t, reports.Inconclusive, i.Verdict, "seen, but in a run a budget stopped")
		}
	}
}
