package reports

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode"
)

// IndexFile is the name of the run index in a report directory.
const IndexFile = "index.md"

// runFile is the name of a run's entry in its folder, read back by UpdateIndex.
const runFile = "run.json"

// RunEntry is one run of a report directory, kept as run.json in the
// run's folder and listed by index.md.
type RunEntry struct {
	RunID   string    `json:"run_id"`
	Kind    string    `json:"kind"` // "failure", "property" (a run that did not fail) or "certification"
	Started time.Time `json:"started"`
	Verdict Verdict   `json:"verdict"`
	// Summary is one line: "replay-consistent violated: …", a provider.
	Summary string `json:"summary"`
	// Report is the run's main file, relative to its folder ("failure.md").
	Report string `json:"report"`
}

// RunFolder is the folder of a run inside a report directory:
// "<UTC timestamp>-<run id>", the timestamp as 20060102T150405.000Z (to the
// millisecond, so two runs of one test a second apart stay apart) and the run
// id with every character other than a letter, digit, '-' or '_' made '_'
// ("TestConformance/replay-new-charge" → "TestConformance_replay-new-charge").
// Two runs of one id started in the same millisecond share a folder.
func RunFolder(started time.Time, runID string) string {
	safe := strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, runID)
	if safe == "" {
		safe = "run"
	}
	return started.UTC().Format("20060102T150405.000Z") + "-" + safe
}

// writeRun writes files (name → content) and e as run.json into
// dir/folder, creating it, rebuilds the folder's report.html from what it
// now holds (writeReportHTML), then rebuilds dir/index.md. Names ending
// in .sh are made executable.
func writeRun(dir, folder string, e RunEntry, files map[string][]byte) error {
	if folder == "" || filepath.Base(folder) != folder || folder == "." || folder == ".." {
		return fmt.Errorf("reports: invalid run folder %q", folder)
	}
	run := filepath.Join(dir, folder)
	if err := os.MkdirAll(run, 0o755); err != nil {
		return fmt.Errorf("reports: %w", err)
	}
	entry, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return fmt.Errorf("reports: encoding the run entry: %w", err)
	}
	files[runFile] = append(entry, '\n')
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var errs []error
	for _, n := range names {
		mode := os.FileMode(0o644)
		if strings.HasSuffix(n, ".sh") {
			mode = 0o755
		}
		errs = append(errs, writeFile(filepath.Join(run, n), files[n], mode))
		if mode == 0o755 {
			errs = append(errs, os.Chmod(filepath.Join(run, n), mode)) // WriteFile keeps an old file's mode
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("reports: %w", err)
	}
	if err := writeReportHTML(dir, folder, e); err != nil {
		return err
	}
	return UpdateIndex(dir)
}

// UpdateIndex rebuilds dir/index.md from the run.json of every run folder
// in dir: one row per run, newest first (ties by folder name, descending),
// with its verdict and a link to its report. It writes a temporary file and
// renames it, so a reader never sees half an index; two runs updating it at
// once each write a complete index, and the next run adds what one missed.
func UpdateIndex(dir string) error {
	paths, err := filepath.Glob(filepath.Join(dir, "*", runFile))
	if err != nil {
		return fmt.Errorf("reports: %w", err)
	}
	type row struct {
		folder string
		e      RunEntry
	}
	var rows []row
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			continue // a run being written right now: the next update lists it
		}
		var e RunEntry
		if json.Unmarshal(raw, &e) != nil {
			continue
		}
		rows = append(rows, row{filepath.Base(filepath.Dir(p)), e})
	}
	sort.Slice(rows, func(i, j int) bool {
		if !rows[i].e.Started.Equal(rows[j].e.Started) {
			return rows[i].e.Started.After(rows[j].e.Started)
		}
		return rows[i].folder > rows[j].folder
	})
	var b strings.Builder
	b.WriteString("# idemcheck runs\n\nNewest first. Each run's folder holds its reports.\n\n")
	b.WriteString("| started (UTC) | run | kind | verdict | summary |\n|---|---|---|---|---|\n")
	for _, r := range rows {
		link := r.folder + "/"
		if r.e.Report != "" {
			link += r.e.Report
		}
		fmt.Fprintf(&b, "| %s | [%s](%s) | %s | %s | %s |\n", r.e.Started.UTC().Format("2006-01-02 15:04:05"),
			mdText(r.e.RunID), link, mdText(r.e.Kind), verdictCell(r.e.Verdict), mdText(r.e.Summary))
	}
	tmp, err := os.CreateTemp(dir, ".index-*.md")
	if err != nil {
		return fmt.Errorf("reports: %w", err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	_, werr := tmp.Write(Scrub([]byte(b.String())))
	if err := errors.Join(werr, tmp.Close(), os.Chmod(tmp.Name(), 0o644), os.Rename(tmp.Name(), filepath.Join(dir, IndexFile))); err != nil {
		return fmt.Errorf("reports: writing the index: %w", err)
	}
	return nil
}

// FailurePaths are the files a failure run writes.
type FailurePaths struct {
	Dir, Markdown, JSON, Curl, JUnit string
}

// WriteFailureRun writes the artefacts of failure f, started at started,
// into its run folder under dir (RunFolder(started, f.Test)):
// failure.md, failure.json, failure.curl.sh (executable), failure.junit.xml
// (one testcase per name in invariants) and run.json; then rebuilds
// dir/index.md and, when GITHUB_STEP_SUMMARY is set, appends
// FailureSummary to it.
func WriteFailureRun(dir string, started time.Time, f Failure, invariants []string) (FailurePaths, error) {
	return WriteDeviationRun(dir, started, 1, f, invariants) // the first deviation's names
}

// WriteRunSummary records a property run that did not fail under dir:
// summary.md (the run's statistics, summary as printed) and run.json in
// its run folder; then rebuilds dir/index.md and appends a short summary
// to GITHUB_STEP_SUMMARY when set. verdict is Pass, or Inconclusive with
// reason (a remote run's budget ran out before its sequences did). It
// returns the folder.
func WriteRunSummary(dir string, started time.Time, test, summary string, verdict Verdict, reason string) (string, error) {
	folder := RunFolder(started, test)
	var b strings.Builder
	if verdict == Pass {
		fmt.Fprintf(&b, "# idemcheck: %s passed\n\n", mdText(test))
	} else {
		fmt.Fprintf(&b, "# idemcheck: %s %s\n\n%s\n\n", mdText(test), verdict, mdText(reason))
	}
	writeFenced(&b, "", summary)
	line := firstLine(summary)
	if reason != "" {
		line = reason
	}
	e := RunEntry{RunID: test, Kind: "property", Started: started, Verdict: verdict, Summary: line, Report: "summary.md"}
	if err := writeRun(dir, folder, e, map[string][]byte{"summary.md": []byte(b.String())}); err != nil {
		return "", err
	}
	_, err := AppendStepSummary([]byte(b.String()))
	return filepath.Join(dir, folder), err
}

// CertificationPaths are the files a certification run writes.
type CertificationPaths struct {
	Dir, Markdown, JSON, JUnit string
}

// WriteCertificationRun writes c into its run folder under dir
// (RunFolder(c.Started, c.RunID)): certification.md, certification.json,
// certification.junit.xml, run.json, for a requirement FAIL or KNOWN
// with evidence <id>.curl.sh (its requests again, the command that runs
// it in RequirementResult.Reproduce) and, for a requirement failed on a
// history porcupine finds illegal, <id>.porcupine.html (its
// visualisation, linked from the page), each cause's reproduction its
// first requirement's script when it has one; then rebuilds dir/index.md and,
// when GITHUB_STEP_SUMMARY is set, appends the Markdown page to it.
func WriteCertificationRun(dir string, c Certification) (CertificationPaths, error) {
	folder := RunFolder(c.Started, c.RunID)
	p := CertificationPaths{Dir: filepath.Join(dir, folder)}
	files := map[string][]byte{}
	c.Requirements = append([]RequirementResult(nil), c.Requirements...)
	c.runDir = p.Dir
	for i, r := range c.Requirements {
		if len(r.Linearizability) > 0 {
			name := evidenceHeading(r.ID) + ".porcupine.html"
			c.Requirements[i].LinearizabilityFile, files[name] = name, r.Linearizability
		}
		if (r.Verdict == Fail || r.Verdict == Known) && len(r.Evidence) > 0 {
			name := evidenceHeading(r.ID) + ".curl.sh"
			files[name] = requirementCurl(c, r)
			c.Requirements[i].Curl, c.Requirements[i].Reproduce = name, "bash "+shellWord(filepath.Join(p.Dir, name))
		}
	}
	c.Causes = reproduceCauses(c)
	js, err := CertificationJSON(c)
	if err != nil {
		return p, err
	}
	junit, err := CertificationJUnit(c)
	if err != nil {
		return p, err
	}
	md := CertificationMarkdown(c)
	e := RunEntry{RunID: c.RunID, Kind: "certification", Started: c.Started, Verdict: c.Overall(),
		Summary: strings.TrimSpace(RedactURL(c.Provider) + " " + c.Dialect), Report: "certification.md"}
	files["certification.md"], files["certification.json"], files["certification.junit.xml"] = md, js, junit
	if len(c.Hooks) > 0 {
		files["hooks.log"] = hooksLog(c.Hooks)
	}
	if err := writeRun(dir, folder, e, files); err != nil {
		return p, err
	}
	p.Markdown, p.JSON = filepath.Join(p.Dir, "certification.md"), filepath.Join(p.Dir, "certification.json")
	p.JUnit = filepath.Join(p.Dir, "certification.junit.xml")
	_, err = AppendStepSummary(md)
	return p, err
}
