package conformance_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/sut/mutants"
)

// noReach is the reach cell of a row measured by its own run (the redis-
// rows, in real time at 100 checks on every seed: storeMatrix).
const noReach = "its run"

// reachBar is how many of the matrix seeds a mutant must be caught on at
// default settings (issue 28: at least 4 of 5).
const reachBar = 4

// measureReach runs m under every matrix seed at default settings
// (reachEnv) and renders its reach cell: "<caught> of <seeds>, at most
// <checks>", a seed counting when the run failed on m's documented
// invariant within the 100 checks. It is measured when the doc is
// regenerated (make mutants-doc), not in CI's matrix run: at rapid's
// default 30 steps it would about double the matrix's time, and the
// committed column is held to the bar by TestMutantsDocReachBar.
func measureReach(t *testing.T, m mutants.Mutant) string {
	t.Helper()
	caught, most := 0, 0
	for _, seed := range matrixSeeds {
		k := runMutantWith(t, m.Name, seed, reachEnv)
		if !k.failed || k.invariant != m.Invariant || k.checks > 100 {
			t.Logf("%s seed %s at default settings: not caught on %s within 100 checks (failed %v, on %q, after %d)", m.Name, seed, m.Invariant, k.failed, k.invariant, k.checks)
			continue
		}
		caught++
		most = max(most, k.checks)
	}
	if caught == 0 {
		return fmt.Sprintf("0 of %d", len(matrixSeeds))
	}
	return fmt.Sprintf("%d of %d, at most %d", caught, len(matrixSeeds), most)
}

var reachCell = regexp.MustCompile(`^(\d+) of (\d+)`)

// reachGaps are the rows measured below reachBar, each with what was
// measured: issue 28 stays open for them. A gap row must still be caught
// on some seed, and must leave this list once it reaches the bar. None
// now: pg-unconditional-settle, 2 of 5 at issue 28's merge, measured 5 of
// 5 once reconcile-during-checkout drew, with several client instances,
// the job's read before the shopper's resend on another instance;
// abandon-before-lookup-lag, 3 of 5 with half the sequences lagging, 4 of
// 5 with five in eight (faults.LookupLagFor).
var reachGaps = map[string]string{}

// Every mutant of the committed docs/mutants.md is caught at default
// settings on at least reachBar of the seeds (issue 28), or, a redis- row,
// by its own run at 100 checks. It reads the committed column, which make
// mutants-doc measures: a regeneration that loses reach fails here.
func TestMutantsDocReachBar(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "docs", "mutants.md"))
	require.NoError(t, err)
	ms := committedMeasures(string(raw))
	for _, m := range mutants.All() {
		if m.Invariant == "" {
			continue // requirement-only: no sequence meets it, certify's tests kill it
		}
		me, ok := ms[m.Name]
		if !assert.True(t, ok, "%s: no row in docs/mutants.md", m.Name) {
			continue
		}
		if m.RedisStore != nil {
			assert.Equal(t, noReach, me.reach, m.Name)
			continue
		}
		c := reachCell.FindStringSubmatch(me.reach)
		if !assert.NotNil(t, c, "%s: reach %q not measured: run make mutants-doc", m.Name, me.reach) {
			continue
		}
		n, _ := strconv.Atoi(c[1])
		if gap, ok := reachGaps[m.Name]; ok {
			t.Logf("%s: a known reach gap (%s); now %s", m.Name, gap, me.reach)
			assert.Less(t, n, reachBar, "%s reaches the bar (%s): take it off reachGaps", m.Name, me.reach)
			assert.Positive(t, n, "%s: caught on no seed at default settings", m.Name)
			continue
		}
		assert.GreaterOrEqual(t, n, reachBar, "%s: caught at default settings on %s", m.Name, me.reach)
	}
}
