package reports

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Known is the verdict of a deviation (and of an invariant whose only
// deviations are such) that the run's baseline acknowledges: found again,
// reported with its counterexample, but not failing the run, so a team
// can gate CI on new deviations only.
const Known Verdict = "KNOWN"

// Acknowledged is the verdict of a certification requirement that was
// INCONCLUSIVE and that the run's baseline lists by id: a permanent
// limit of the check against this provider, acknowledged by its team. Its
// reason still says why it was not judged. Like KNOWN it does not make
// the run INCONCLUSIVE: a run whose only open items are acknowledged
// is KNOWN overall (exit 0).
const Acknowledged Verdict = "ACKNOWLEDGED"

// Deviation is one distinct deviation a run's failure catalogue found:
// an invariant and the category of its violation (the deterministic
// sentence rapid shrinks by, particulars left out), with its own minimal
// counterexample, replay line and curl script.
type Deviation struct {
	Invariant string `json:"invariant"`
	// Category is what a baseline lists to acknowledge it.
	Category string `json:"category"`
	// Message is the counterexample's exact sentence.
	Message string `json:"message"`
	// Verdict is FAIL, or KNOWN when the baseline lists it.
	Verdict Verdict `json:"verdict"`
	// Steps is the counterexample's number of shopper steps.
	Steps int `json:"steps"`
	// Minimal is "minimal" when the shrink ran to its end, else why not:
	// "not minimal: budget (…)", "not minimal: shrink time (…)", or "not
	// minimal: did not fail again (…)".
	Minimal string `json:"minimal"`
	// Replay is the command that replays it (it names the fail file).
	Replay string `json:"replay"`
	// FailFile is rapid's fail file, relative to the conformance package.
	FailFile string `json:"fail_file,omitempty"`
	// Report and Curl are its failure report and curl script, relative to
	// the report directory ("<run folder>/failure-2.md").
	Report string `json:"report"`
	Curl   string `json:"curl"`
	// Shrink is what reproducing and shrinking it spent; nil when not
	// counted (a property run in process).
	Shrink *ShrinkSpend `json:"shrink,omitempty"`
}

// DeviationName is the base name of deviation n's files in its run
// folder: "failure" for the first, "failure-2", "failure-3"… after it.
func DeviationName(n int) string {
	if n <= 1 {
		return "failure"
	}
	return "failure-" + strconv.Itoa(n)
}

// WriteDeviationRun writes deviation n of a run (f, started at started)
// into the run's folder under dir, as WriteFailureRun does for one
// failure, under the names DeviationName(n) gives (failure-2.md, …).
func WriteDeviationRun(dir string, started time.Time, n int, f Failure, invariants []string) (FailurePaths, error) {
	name := DeviationName(n)
	folder := RunFolder(started, f.Test)
	p := FailurePaths{Dir: filepath.Join(dir, folder)}
	js, err := JSON(f)
	if err != nil {
		return p, err
	}
	junit, err := FailureJUnit(f, invariants)
	if err != nil {
		return p, err
	}
	verdict := Fail
	if f.Verdict == Known {
		verdict = Known
	}
	e := RunEntry{RunID: f.Test, Kind: "failure", Started: started, Verdict: verdict,
		Summary: firstLine(f.Message), Report: name + ".md"}
	if err := writeRun(dir, folder, e, map[string][]byte{
		name + ".md": Markdown(f), name + ".json": js, name + ".curl.sh": CurlScript(f), name + ".junit.xml": junit,
	}); err != nil {
		return p, err
	}
	p.Markdown, p.JSON = filepath.Join(p.Dir, name+".md"), filepath.Join(p.Dir, name+".json")
	p.Curl, p.JUnit = filepath.Join(p.Dir, name+".curl.sh"), filepath.Join(p.Dir, name+".junit.xml")
	_, err = AppendStepSummary(FailureSummary(f, p.Markdown))
	return p, err
}

// WriteCatalogueRun writes catalogue.md — the run's statistics (summary,
// as printed) and every deviation found, each with its verdict, category,
// counterexample length, whether it is minimal, report, curl script and
// replay line — and run.json into the run folder of test under dir, then
// rebuilds dir/index.md. The run's verdict is FAIL when a deviation is,
// else KNOWN. It returns catalogue.md's path.
func WriteCatalogueRun(dir string, started time.Time, test, summary string, devs []Deviation) (string, error) {
	folder := RunFolder(started, test)
	var vs []Verdict
	for _, d := range devs {
		vs = append(vs, d.Verdict)
	}
	verdict := worst(vs)
	var b strings.Builder
	fmt.Fprintf(&b, "# idemcheck: %s %s — %s\n\n", mdText(test), verdict, plural(len(devs), "deviation"))
	b.WriteString(CatalogueMarkdown(devs, "../")) // catalogue.md is in the run folder
	b.WriteString("## Statistics\n\nThe sequences that ran to a verdict, the failing ones included; rapid's shrinking attempts are not counted.\n\n")
	writeFenced(&b, "", summary)
	e := RunEntry{RunID: test, Kind: "property", Started: started, Verdict: verdict,
		Summary: plural(len(devs), "deviation"), Report: "catalogue.md"}
	if err := writeRun(dir, folder, e, map[string][]byte{"catalogue.md": []byte(b.String())}); err != nil {
		return "", err
	}
	return filepath.Join(dir, folder, "catalogue.md"), nil
}

// shrinkCell is a deviation's shrink state as the catalogue's table shows
// it: its first words ("minimal", "not minimal: budget"), before any
// particulars in parentheses, and only "not minimal" when the rest is a
// sentence; the list under the table gives it whole.
func shrinkCell(minimal string) string {
	cell, _, _ := strings.Cut(minimal, " (")
	if len(cell) > 30 {
		cell, _, _ = strings.Cut(cell, ": ")
	}
	return cell
}

// CatalogueMarkdown is the "Deviations" section of a page: a narrow
// table, verdict first (the shrink state cut to its first words), then
// each deviation's message, replay line, report, curl script and
// category. Links are the deviations' Report and Curl paths with prefix
// before them ("../" from a run folder to the report directory).
func CatalogueMarkdown(devs []Deviation, prefix string) string {
	var b strings.Builder
	b.WriteString("## Deviations\n\n")
	if len(devs) == 0 {
		b.WriteString("none found\n\n")
		return b.String()
	}
	b.WriteString("Each distinct deviation (invariant and kind of violation) with its own counterexample. " +
		"A baseline file (IDEMCHECK_BASELINE) listing a category or an invariant name turns its FAIL into KNOWN.\n\n")
	var rows [][]string
	for i, d := range devs {
		rows = append(rows, []string{strconv.Itoa(i + 1), verdictCell(d.Verdict), code(d.Invariant, true), strconv.Itoa(d.Steps), mdText(shrinkCell(d.Minimal))})
	}
	writeTable(&b, []string{"#", "verdict", "invariant", "steps", "shrink"}, rows, 3)
	for i, d := range devs {
		fmt.Fprintf(&b, "%d. %s\n\n", i+1, mdText(d.Message))
		if d.Replay != "" {
			fmt.Fprintf(&b, "   replay: %s\n\n", code(d.Replay, false))
		}
		var files []string
		for _, f := range []string{d.Report, d.Curl} {
			if f != "" {
				files = append(files, fmt.Sprintf("[%s](%s)", mdText(filepath.Base(f)), prefix+filepath.ToSlash(f)))
			}
		}
		if len(files) > 0 {
			fmt.Fprintf(&b, "   files: %s\n\n", strings.Join(files, " · "))
		}
		if d.Minimal != shrinkCell(d.Minimal) {
			fmt.Fprintf(&b, "   shrink: %s\n\n", mdText(d.Minimal))
		}
		fmt.Fprintf(&b, "   category (for a baseline): %s\n\n", code(d.Category, false))
	}
	return b.String()
}
