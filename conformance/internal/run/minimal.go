package run

import (
	"fmt"
	"strings"

	"github.com/idemcheck/idemcheck/conformance/internal/machine"
	"github.com/idemcheck/idemcheck/reports"
)

// flaky reports whether rapid's message is its "flaky test" verdict.
func flaky(rapidText string) bool { return strings.Contains(rapidText, "flaky test") }

// flakyAgain is what rapid's "flaky test" verdict in rapidText says the
// sequence did when rapid ran it again: "" when it did not fail at all,
// else the first line of that run's failure (for the property, its
// category, or "idemcheck could not judge the run: …"). rapid (engine.go)
// calls a shrink flaky whenever the second run's error differs from the
// first's, in message or in where it failed, not only when it passed.
func flakyAgain(rapidText string) string {
	_, after, ok := strings.Cut(rapidText, "flaky test, can not reproduce a failure")
	if !ok {
		return ""
	}
	_, after, ok = strings.Cut(after, "\nTraceback (")
	if !ok {
		return ""
	}
	line, _, _ := strings.Cut(after, "\n")
	line = strings.TrimSuffix(line, "):")
	if line == "<nil>" {
		return ""
	}
	return line
}

// minimality is a deviation's "minimal" label and the remedy of its note:
// "minimal" when rapid's shrink ran to its end; otherwise what cut it
// short, by evidence — the budget (cut, the budget's words), a second run
// that did not fail (timing: the run is in real time, unless the
// reproducibility check rep then reproduced it every time), a second run
// that failed otherwise (named: a cause, not timing), or the shrink time
// (shrinkSpent), or a replay of a fail file (replayed: -rapid.failfile,
// which rapid runs first and never shrinks when it fails). shrinks is how
// many checks rapid ran after finding it (at most 1: it was never
// shrunk).
func minimality(cut, rapidText string, shrinks int, shrinkSpent, replayed bool, rep *reports.Reproducibility) (minimal, remedy string) {
	switch {
	case strings.HasPrefix(cut, machine.KnownCut+" (listed in the baseline)"):
		return "not minimal: " + cut,
			"It is known: remove it from the baseline to shrink it."
	case strings.HasPrefix(cut, machine.KnownCut):
		return "not minimal: " + cut,
			"The requirement named is its minimal reproduction (its evidence and curl script on the certification page)."
	case strings.HasPrefix(cut, shortestShape):
		return "not minimal: " + cut,
			"It is the shortest shape of the sequence that first showed it; raise the budgets or replay it to shrink its values."
	case strings.HasPrefix(cut, machine.DeviationCut):
		return "not minimal: " + cut,
			"Each deviation's shrink against a URL may spend a share of each budget (IDEMCHECK_MAX_REQUESTS, IDEMCHECK_MAX_CHARGES, IDEMCHECK_MAX_DURATION) and at most " + machine.DeviationShrinkTime.String() + ": raise the budgets to shrink further."
	case cut != "":
		return "not minimal: budget (" + cut + " while shrinking)",
			"Raise IDEMCHECK_MAX_REQUESTS, IDEMCHECK_MAX_CHARGES or IDEMCHECK_MAX_DURATION to shrink further."
	case flaky(rapidText):
		first, then := "it", "so it was not shrunk"
		if shrinks > 1 && !replayed { // a replay runs its fail file as saved: nothing smaller
			first, then = "a smaller sequence failed once but", "which ends rapid's shrinking"
		}
		if other := flakyAgain(rapidText); other != "" {
			return fmt.Sprintf("not minimal: %s failed otherwise when rapid ran it a second time (%s), %s", first, other, then),
				"Replay it a few times (IDEMCHECK_REPRODUCE) to see which failure comes back."
		}
		why := "timing: the run is in real time"
		if rep != nil && rep.Runs > 0 && !rep.Flaky() {
			why = "yet its replays " + rep.String() + ": no timing shown"
		}
		return fmt.Sprintf("not minimal: %s did not fail again when rapid ran it a second time (%s), %s", first, why, then),
			"Give the provider more processing time, or replay it a few times (IDEMCHECK_REPRODUCE), to see how often it fails."
	case replayed && strings.Contains(rapidText, "failed after 0 tests"):
		// The fail file failed (rapid's count is then 0) and was not shrunk;
		// shrinks counts the reproducibility check's runs too. A fail file
		// that passed, then a first new check that failed and was shrunk,
		// is labelled a replay as well: never called minimal wrongly.
		return "not minimal: a replay (rapid runs a fail file as saved and does not shrink it)",
			"The run that saved the fail file says whether it was minimal (its report's first lines)."
	case shrinkSpent:
		return "not minimal: shrink time (-rapid.shrinktime " + rapidShrinkTime().String() + ")",
			"Raise -rapid.shrinktime (RAPID_SHRINKTIME) to shrink further."
	}
	return "minimal", ""
}
