package conformance_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCatalogueKnownDeviationLeavesTheBudget: a deviation the baseline
// lists is reported KNOWN but its shrink may spend only KnownShrinkShare
// of each budget, so the search for new deviations goes on and a run
// whose only failures are known passes, not INCONCLUSIVE. Regression (the
// README walkthrough): against replay-new-charge with every invariant it
// breaks in the baseline, shrinking the known deviations spent 16 500 –
// 18 866 of 20 000 requests and the run ended INCONCLUSIVE (the requests
// budget is spent) or "held vacuously".
func TestCatalogueKnownDeviationLeavesTheBudget(t *testing.T) {
	t.Parallel() // it mostly waits (real time): beside another such test
	url := serveMutants(t, "replay-new-charge")
	baseline := filepath.Join(t.TempDir(), "baseline.txt")
	require.NoError(t, os.WriteFile(baseline, []byte("replay-consistent\nat-most-one-charge-per-order\nbooks-balance\nequivalent-requests-agree\n"), 0o644))
	out, failed, _ := runConformance(t, "1", "IDEMCHECK_PROVIDER="+url, "IDEMCHECK_BASELINE="+baseline,
		"IDEMCHECK_MUTANT=", "IDEMCHECK_TIME_SCALE=0.0667", "IDEMCHECK_MAX_REQUESTS=6000", "IDEMCHECK_MAX_CHARGES=3000",
		"RAPID_CHECKS=60", "RAPID_SHRINKTIME=15m")
	for line := range strings.SplitSeq(out, "\n") {
		if strings.Contains(line, "idemcheck: round ") || strings.Contains(line, "idemcheck: deviation ") || strings.Contains(line, " sequences, ") {
			t.Log(strings.TrimSpace(line))
		}
	}
	require.False(t, failed, "every deviation is known: no FAIL; output:\n%s", out)
	require.Contains(t, out, "deviation 1, KNOWN: ", out)
	require.NotContains(t, out, "INCONCLUSIVE", "the known deviations' shrinks left the search its budget; output:\n%s", out)
}
