package run

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/conformance/internal/machine"
	"github.com/idemcheck/idemcheck/reports"
)

// A requirement that FAILed (or the baseline turned KNOWN) makes the
// invariants it shows known to the property of the same run; one that
// passed, or could not be judged, makes nothing known, and the first
// requirement to show an invariant is the one named.
func TestShownByTheRequirementsThatFailed(t *testing.T) {
	shown := ShownBy([]reports.RequirementResult{
		{ID: certify.ReqMismatch, Verdict: reports.Pass},
		{ID: certify.ReqReplay, Verdict: reports.Fail},
		{ID: certify.ReqShapes, Verdict: reports.Known},
		{ID: certify.ReqConcurrent, Verdict: reports.Fail},
		{ID: certify.ReqCrossAccount, Verdict: reports.NotJudged},
	})
	assert.Equal(t, Shown{
		check.ReplayConsistent:        certify.ReqReplay,
		check.EquivalentRequestsAgree: certify.ReqShapes,
		check.AtMostOneChargePerOrder: certify.ReqConcurrent,
	}, shown)
	r := &runState{cfg: Config{Shown: shown, Baseline: Baseline{check.EquivalentRequestsAgree}}}
	assert.Equal(t, "known (requirement replay-returns-first-response FAILed on replay-consistent in this run): not shrunk again",
		r.knownWhy(&check.ViolationError{Invariant: check.ReplayConsistent, Category: "replay-consistent: …"}))
	assert.Equal(t, "known (listed in the baseline): not shrunk again",
		r.knownWhy(&check.ViolationError{Invariant: check.EquivalentRequestsAgree, Category: "equivalent-requests-agree: …"}))
	assert.Empty(t, r.knownWhy(&check.ViolationError{Invariant: check.MismatchRejected, Category: "mismatch-rejected: …"}))
}

// Every requirement id shownBy names is a requirement, and every
// invariant it names is one.
func TestShownByNamesRealRequirementsAndInvariants(t *testing.T) {
	ids := map[string]bool{}
	for _, r := range certify.Requirements() {
		ids[r.ID] = true
	}
	names := map[string]bool{}
	for _, inv := range append(check.Safety(), check.Liveness()...) {
		names[inv.Name] = true
	}
	for id, invs := range shownBy {
		assert.True(t, ids[id], "shownBy names %q, no requirement", id)
		for _, inv := range invs {
			assert.True(t, names[inv], "shownBy[%s] names %q, no invariant", id, inv)
		}
	}
}

// failFile writes a fail file as rapid saves one: comments, its version
// and seed, then draws.
func failFile(t *testing.T, draws ...uint64) string {
	t.Helper()
	lines := []string{"# 2026/12/03 [idemcheck/property] output", "v0.4.8#7"}
	for _, d := range draws {
		lines = append(lines, "0x"+strconv.FormatUint(d, 16))
	}
	ff := filepath.Join(t.TempDir(), "x-"+strconv.Itoa(os.Getpid())+".fail")
	require.NoError(t, os.WriteFile(ff, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	return ff
}

// drawsOf are the draws of fail file ff, as rapid loads them.
func drawsOf(t *testing.T, ff string) []string {
	t.Helper()
	b, err := os.ReadFile(ff)
	require.NoError(t, err)
	var out []string
	for line := range strings.SplitSeq(string(b), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") && !strings.Contains(line, "#") {
			out = append(out, line)
		}
	}
	return out
}

// A shrink the run cut keeps the smallest counterexample's draws in its
// fail file, even when rapid saved draws of its own: those of the check
// that was cut mid-sequence, which replay nothing. A shrink rapid ended
// itself keeps rapid's file as it is; a cut one with no draws recorded
// keeps no fail file. Regression (issue 24, item 2, the lost branch): a
// shrink cut by a deviation's cap while rapid ran a candidate a second
// time left that candidate's partial draws in the fail file, whose replay
// line then no longer failed (TestReplayOfACertifyFailure).
func TestKeepSmallestAfterACut(t *testing.T) {
	smallest := []uint64{0x5, 0x0, 0x9}
	ff := failFile(t, 0x1, 0x2)
	require.Equal(t, ff, keepSmallest(ff, smallest, true))
	assert.Equal(t, []string{"0x5", "0x0", "0x9"}, drawsOf(t, ff), "a cut shrink's fail file holds the smallest counterexample's draws")
	assert.Equal(t, uint64(7), failFileSeed(ff), "rapid's version and seed stay")

	ff = failFile(t, 0x1, 0x2)
	require.Equal(t, ff, keepSmallest(ff, smallest, false))
	assert.Equal(t, []string{"0x1", "0x2"}, drawsOf(t, ff), "a shrink rapid ended keeps rapid's draws")

	ff = failFile(t)
	require.Equal(t, ff, keepSmallest(ff, smallest, true))
	assert.Equal(t, []string{"0x5", "0x0", "0x9"}, drawsOf(t, ff))

	ff = failFile(t, 0x1)
	assert.Empty(t, keepSmallest(ff, nil, true), "no draws recorded: no fail file")
	_, err := os.Stat(ff)
	assert.True(t, os.IsNotExist(err), "the partial fail file is removed")
}

// In real time, a shrink check rapid did not record (its first run of a
// candidate) never becomes the smallest counterexample: its draws are
// unknown, so the world reported and the fail file's draws could differ.
// The search's failure and a bubble's checks always count.
func TestKeepsDrawsOnlyOfRecordedShrinkChecks(t *testing.T) {
	assert.False(t, keepsDraws(true, machine.PhaseShrink, nil))
	assert.True(t, keepsDraws(true, machine.PhaseShrink, []uint64{1}))
	assert.True(t, keepsDraws(true, machine.PhaseSearch, nil))
	assert.True(t, keepsDraws(false, machine.PhaseShrink, nil))
}

// What shrinking spent is summed over the deviations that counted it.
func TestShrinkTotal(t *testing.T) {
	assert.Equal(t, reports.ShrinkSpend{Attempts: 4, Requests: 30, Charges: 12}, shrinkTotal([]reports.Deviation{
		{Shrink: &reports.ShrinkSpend{Attempts: 1, Requests: 7, Charges: 5}},
		{},
		{Shrink: &reports.ShrinkSpend{Attempts: 3, Requests: 23, Charges: 7}},
	}))
}

// The shapes of a reproduction are its failing step alone, then with one
// earlier step, nearest first, then with two: rapid's draws with the
// other steps' groups left out, the draws before the first step and from
// the element that ended the repetition kept.
func TestShapesOfAReproduction(t *testing.T) {
	// draws: 2 before t.Repeat, four steps of 2 draws (10.., 20.., 30..,
	// 40..), the element that ended it, one draw after.
	data := []uint64{1, 2, 10, 11, 20, 21, 30, 31, 40, 41, 0, 9}
	elems := [][2]int{{2, 4}, {4, 6}, {6, 8}, {8, 10}, {10, 11}}
	shapes := shapesOf(data, elems, 7) // failed in the third step
	require.NotEmpty(t, shapes)
	assert.Equal(t, []uint64{1, 2, 30, 31, 0, 9}, shapes[0], "the failing step alone")
	assert.Equal(t, []uint64{1, 2, 20, 21, 30, 31, 0, 9}, shapes[1], "with the step before it")
	assert.Equal(t, []uint64{1, 2, 10, 11, 30, 31, 0, 9}, shapes[2])
	assert.Equal(t, []uint64{1, 2, 10, 11, 20, 21, 30, 31, 0, 9}, shapes[3], "with two earlier steps; the fourth step, after the failure, never")
	assert.Len(t, shapes, 4)

	// Failing after the steps (liveness): the last step is the failing one;
	// a shape as long as the reproduction is not tried.
	shapes = shapesOf(data, elems, -1)
	assert.Equal(t, []uint64{1, 2, 40, 41, 0, 9}, shapes[0])
	for _, s := range shapes {
		assert.Less(t, len(s), len(data))
	}
	assert.Empty(t, shapesOf(data, elems[4:], -1), "no step: no shape")
	assert.LessOrEqual(t, len(shapesOf(make([]uint64, 203), func() (e [][2]int) {
		for i := range 100 {
			e = append(e, [2]int{2 * i, 2*i + 2})
		}
		return append(e, [2]int{200, 201})
	}(), -1)), maxShapeTries)
}

// A baseline may list an INCONCLUSIVE invariant by name: it is then
// ACKNOWLEDGED, its reason kept, and its entry used; a listed invariant
// that passed stays PASS and its entry unused. Regression (issue 24, Done
// when): against the four planted bugs, with every deviation and
// requirement in the baseline, mismatch-rejected held vacuously (every
// sequence ended at an acknowledged deviation first) and certify exited 3
// however complete the baseline was.
func TestBaselineAcknowledgesAnInconclusiveInvariant(t *testing.T) {
	b := Baseline{check.MismatchRejected, check.BooksBalance}
	vacuous := reports.InvariantResult{Name: check.MismatchRejected, Verdict: reports.Inconclusive, Reason: "held vacuously: no reused keys with another body in 105 sequences"}
	got := b.invariant(vacuous)
	assert.Equal(t, reports.Acknowledged, got.Verdict)
	assert.Equal(t, acknowledgedPrefix+vacuous.Reason, got.Reason)
	pass := reports.InvariantResult{Name: check.BooksBalance, Verdict: reports.Pass}
	assert.Equal(t, pass, b.invariant(pass))
	other := reports.InvariantResult{Name: check.ReplayConsistent, Verdict: reports.Inconclusive, Reason: "x"}
	assert.Equal(t, other, b.invariant(other), "not listed: still INCONCLUSIVE")
	assert.Equal(t, []string{check.BooksBalance}, b.unused(reports.Certification{Invariants: []reports.InvariantResult{got, pass}}))
	assert.NotEqual(t, reports.Inconclusive, reports.Certification{Invariants: []reports.InvariantResult{got, pass}}.Overall())
}
