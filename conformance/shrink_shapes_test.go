package conformance_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/reports"
)

// TestShortestShapesFirst (issue 24, item 2): against a URL, a deviation
// found in a long sequence (RAPID_STEPS=1000) is first tried in its
// shortest shapes — the failing step alone, then with one earlier step —
// so replay-new-charge's 2-step counterexample (docs/mutants.md) costs
// tens of requests; the run's statistics count what shrinking spent. Regression:
// rapid's shrink of the same sequence, with the shapes off, is still
// longer than 2 steps when the 60-request budget cuts it
// (TestShrinkCutByTheBudgetKeepsMemoryFlat), and against a provider taking
// 300 ms an answer shrinking one deviation took 5.5 of 6 minutes.
func TestShortestShapesFirst(t *testing.T) {
	t.Parallel() // it mostly waits on real time, beside other such tests
	url, requests := serveRefProvider(t, "replay-new-charge")
	out, failed, dir := runConformance(t, "1", "IDEMCHECK_PROVIDER="+url, "IDEMCHECK_MUTANT=", "IDEMCHECK_TIME_SCALE=0.0667",
		"IDEMCHECK_MAX_DEVIATIONS=1", "RAPID_STEPS=1000", "RAPID_CHECKS=5")
	require.True(t, failed, out)
	rep := deviationReport(t, dir, 1, out)
	require.Equal(t, "replay-consistent", rep.Invariant, out)
	require.Equal(t, 2, rep.StepCount, "replay-new-charge's minimal counterexample (docs/mutants.md); output:\n%s", out)
	require.Contains(t, out, "not minimal: shortest shape found, ", out)
	raw, err := os.ReadFile(reportFile(dir, "url", reports.StatsFile))
	require.NoError(t, err, out)
	var rs reports.RunStats
	require.NoError(t, json.Unmarshal(raw, &rs))
	t.Logf("shrinking spent %s; the provider got %d requests in all", rs.Coverage.Shrink, requests.Load())
	require.Positive(t, rs.Coverage.Shrink.Attempts)
	require.Less(t, rs.Coverage.Shrink.Requests, 100, "tens of requests, not thousands")
}
