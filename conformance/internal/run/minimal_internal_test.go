package run

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/reports"
)

// rapidFlaky is rapid's (engine.go) "flaky test" verdict, the second run's
// error being again (nil: it passed).
func rapidFlaky(again string) string {
	if again == "" {
		again = "<nil>"
	}
	return "[rapid] flaky test, can not reproduce a failure\nTo try to reproduce, specify -run=\"TestConformance\" -rapid.failfile=\"x.fail\"\n" +
		"Traceback (" + again + "):\n    conformance/property.go:265\nOriginal traceback (equivalent-requests-agree: … another shape … charged again\nreport: failure.md):\n    conformance/property.go:269\nFailed test output:"
}

// The "not minimal" label says timing only on evidence of timing: a
// second run that did not fail, and not when the reproducibility check
// then reproduced it every time; a second run that failed otherwise
// (rapid calls that flaky too) is named, as are the budget and the shrink
// time. Regression (outside tester): a deterministic provider's
// counterexample was labelled "(the provider's timing)" whatever rapid's
// second run had done.
func TestMinimality_TimingOnlyOnEvidence(t *testing.T) {
	other := "idemcheck could not judge the run: lookup by reference answered 503"
	for _, c := range []struct {
		name, cut, text string
		shrinks         int
		spent, replayed bool
		rep             *reports.Reproducibility
		want, not       string
	}{
		{name: "shrunk to its end", text: "[rapid] failed after 3 tests", shrinks: 40, want: "minimal", not: "not minimal"},
		{name: "budget", cut: "the requests budget is spent", text: rapidFlaky(""), shrinks: 40, want: "not minimal: budget (the requests budget is spent while shrinking)", not: "timing"},
		{name: "shrink time", text: "[rapid] failed after 3 tests", shrinks: 40, spent: true, want: "not minimal: shrink time", not: "timing"},
		{name: "passed again", text: rapidFlaky(""), shrinks: 40, want: "did not fail again when rapid ran it a second time (timing: the run is in real time), which ends rapid's shrinking"},
		{name: "passed again, never shrunk", text: rapidFlaky(""), shrinks: 1, want: "it did not fail again when rapid ran it a second time (timing: the run is in real time), so it was not shrunk"},
		{name: "passed again, reproduced every time", text: rapidFlaky(""), shrinks: 40, rep: &reports.Reproducibility{Runs: 3, Reproduced: 3}, want: "yet its replays reproduced 3/3: no timing shown", not: "timing: the run"},
		{name: "a fail file's replay", text: "[rapid] failed after 0 tests", shrinks: 3, replayed: true, want: "not minimal: a replay", not: "timing"},
		{name: "a fail file's replay that did not fail again", text: rapidFlaky(""), shrinks: 3, replayed: true,
			want: "not minimal: it did not fail again when rapid ran it a second time (timing: the run is in real time), so it was not shrunk", not: "a smaller sequence"},
		{name: "a fail file that passed, then found and shrunk", text: "[rapid] failed after 3 tests", shrinks: 40, replayed: true, want: "minimal", not: "not minimal"},
		{name: "failed otherwise", text: rapidFlaky(other), shrinks: 40, want: "failed otherwise when rapid ran it a second time (" + other + ")", not: "timing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, remedy := minimality(c.cut, c.text, c.shrinks, c.spent, c.replayed, c.rep)
			assert.Contains(t, got, c.want)
			if c.not != "" {
				assert.NotContains(t, got, c.not)
			}
			assert.NotContains(t, got, "provider's timing", "the provider is not shown to be the cause")
			assert.Equal(t, got == "minimal", remedy == "", remedy)
			assert.False(t, strings.Contains(got, "flaky test"), "never rapid's words")
		})
	}
}
