package conformance

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/conformance/internal/machine"
	"github.com/idemcheck/idemcheck/sut/mutants"
)

// agreeEnv names the file a child run of TestConformance writes, when
// set, one line per step: the incremental verdict (check.Checker) next to
// the whole-history one (check.Evaluate) over the same World.
const agreeEnv = "IDEMCHECK_CHECKER_AGREE"

func init() {
	path := os.Getenv(agreeEnv)
	if path == "" {
		return
	}
	line := lineFile(path)
	machine.StepHook = func(w check.World, invs []check.Invariant, got *ViolationError) {
		want := check.Evaluate(w, invs)
		if verdictLine(got) != verdictLine(want) {
			line("DISAGREE incremental %s whole %s", verdictLine(got), verdictLine(want))
			return
		}
		line("agree %s", verdictLine(want))
	}
	machine.ViewHook = func(step, full check.World) {
		for what, same := range map[string]bool{
			"orders":         slices.Equal(step.Orders, full.Orders),
			"attempts":       slices.Equal(step.Attempts, full.Attempts),
			"refund intents": slices.Equal(step.RefundIntents, full.RefundIntents),
		} {
			if !same {
				line("DISAGREE the step's %s (kept from the store's change log) differ from a full read", what)
			}
		}
	}
}

// verdictLine is a verdict on one line: "holds", or the invariant, the
// category and the message.
func verdictLine(v *ViolationError) string {
	if v == nil {
		return "holds"
	}
	return strings.ReplaceAll(v.Invariant+" | "+v.Category+" | "+v.Message, "\n", `\n`)
}

// agreeRun runs TestConformance in a child against mutant ("" for the
// reference) with seed and checks, and returns the child's step lines.
func agreeRun(t *testing.T, mutant, seed string, checks int) (lines []string, failed bool, out string) {
	t.Helper()
	return childLines(t, agreeEnv, mutant, seed, checks)
}

// agreeMutants are the in-memory mutants whose counterexamples the
// agreement test replays: one or more per invariant the Checker judges
// from its groups (key-format, one-key-per-intent, no-unsafe-retry,
// 409-never-final, equivalent-requests-agree, key-scoped-per-account,
// replay-consistent with its declines half, mismatch-rejected,
// key-scoped-per-endpoint) and per invariant over the client's and the
// provider's state (at-most-one-charge-per-order,
// at-most-one-refund-per-intent, books-balance). stale-key-resend takes
// ~10 s to find, so no-stale-key's steps are judged on the reference's and
// these runs' histories.
var agreeMutants = map[string]struct{ inv, seed string }{
	"unquoted-key":                   {KeyFormat, "1"},
	"fresh-key-per-request":          {OneKeyPerIntent, "1"},
	"retry-contract-violation":       {NoUnsafeRetry, "1"},
	"replay-new-charge":              {ReplayConsistent, "1"},
	"decline-not-stored-then-charge": {ReplayConsistent, "1"},
	"declined-key-recharges":         {MismatchRejected, "2"},
	"conflict-is-success":            {ConflictNeverFinal, "1"},
	"path-sensitive-key":             {EquivalentRequestsAgree, "1"},
	"global-key-scope":               {KeyScopedPerAccount, "1"},
	"keys-shared-across-endpoints":   {check.KeyScopedPerEndpoint, "1"},
	"refund-replays-charge":          {check.KeyScopedPerEndpoint, "1"},
	"two-paths-two-keys":             {AtMostOneChargePerOrder, "1"},
	"refund-not-idempotent":          {check.AtMostOneRefundPerIntent, "1"},
	"reconciler-abandons-charged":    {BooksBalance, "1"},
}

// The incremental checker (check.Checker) and the whole-history evaluation
// (check.Evaluate) name the same first violation — invariant, category and
// message — or none, on every step of random sequences of the real
// property: against the embedded reference, and against mutants, through
// their search and every prefix their shrinking tries, so on their
// counterexamples too. Each mutant must also be caught, and on its
// invariant, so the comparison is not between two verdicts that never fail.
func TestCheckerAgreesWithWholeEvaluation(t *testing.T) {
	lines, failed, out := agreeRun(t, "", "1", 20)
	require.False(t, failed, "the reference failed:\n%s", out)
	assertAgree(t, "reference", lines, "")
	assert.Greater(t, len(lines), 200, "the reference run judged too few steps")
	for name, want := range agreeMutants {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m, err := mutants.Lookup(name)
			require.NoError(t, err)
			require.Empty(t, m.ClientStore, "an in-memory mutant")
			lines, failed, out := agreeRun(t, name, want.seed, 100)
			require.True(t, failed, "the mutant survived:\n%s", out)
			assertAgree(t, name, lines, want.inv)
		})
	}
}

// assertAgree checks a child's step lines: no disagreement, and when inv
// is set, a violation of inv among the steps.
func assertAgree(t *testing.T, run string, lines []string, inv string) {
	t.Helper()
	found := inv == ""
	for i, l := range lines {
		if !assert.False(t, strings.HasPrefix(l, "DISAGREE"), "%s step %d: %s", run, i+1, l) {
			return
		}
		if inv != "" && strings.HasPrefix(l, "agree "+inv+" | ") {
			found = true
		}
	}
	assert.True(t, found, "%s: no step showed %s (%d steps)", run, inv, len(lines))
}
