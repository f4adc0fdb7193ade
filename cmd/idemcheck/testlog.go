package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/idemcheck/idemcheck/reports"
)

// logFile is the name of the file, in the run folder, that holds the
// testing package's output of a run that failed without -v: rapid's
// draws and "[rapid]" lines, the harness's t.Log, the failures in full.
const logFile = "rapid.log"

// testLog is where the testing package's output of a run goes: stderr
// with -v (what go test -v prints), else a temporary file that keep moves
// into the run folder when the run failed, so that stderr keeps the
// progress lines and a short failure summary (docs/cli.md).
type testLog struct {
	f *os.File // nil with -v
}

// newTestLog returns the log of a run, on stderr when verbose.
func newTestLog(verbose bool) (*testLog, error) {
	if verbose {
		return &testLog{}, nil
	}
	f, err := os.CreateTemp("", "idemcheck-rapid-*.log")
	if err != nil {
		return nil, err
	}
	// Unlinked at once where the system allows it (the open file is read
	// back through f): a run that exits on a signal leaves nothing behind.
	_ = os.Remove(f.Name())
	return &testLog{f: f}, nil
}

// out is the file the testing package writes to: nil (stderr) with -v.
func (l *testLog) out() *os.File { return l.f }

// keep ends the log. With -v there is nothing to do. When the run failed
// it goes to folder/rapid.log, named on stderr in one line; with no
// folder (the run did not start: a short log, its reason) it is copied to
// stderr. A run that did not fail leaves no log. The temporary file is
// removed in every case (already, on a system that unlinks open files).
func (l *testLog) keep(folder string, failed bool, stderr io.Writer) {
	if l.f == nil {
		return
	}
	defer func() { _ = os.Remove(l.f.Name()) }()
	if !failed {
		_ = l.f.Close()
		return
	}
	if folder == "" {
		if _, err := l.f.Seek(0, io.SeekStart); err == nil {
			_, _ = io.Copy(stderr, l.f)
		}
		_ = l.f.Close()
		return
	}
	path := filepath.Join(folder, logFile)
	if err := errors.Join(l.copyTo(path), l.f.Close()); err != nil {
		fmt.Fprintf(stderr, "idemcheck: could not keep rapid's log: %v\n", err)
		return
	}
	fmt.Fprintf(stderr, "idemcheck: rapid's log (draws, the harness's log; -v prints it here): %s\n", path)
}

// maxLog is how much of a run's log copyTo keeps: the first 64 MiB (a
// failing run's draws are some hundred KiB; the rest is cut with a note).
const maxLog = 64 << 20

// copyTo copies the log to path, creating its folder, through
// reports.Scrub like every other file of the run folder: the wire already
// scrubs what the provider answers, and this keeps a secret that reached
// the harness's log some other way out of the file too.
func (l *testLog) copyTo(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if _, err := l.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	b, err := io.ReadAll(io.LimitReader(l.f, maxLog+1))
	if err != nil {
		return err
	}
	if len(b) > maxLog {
		b = append(b[:maxLog], fmt.Sprintf("\n[idemcheck: the log is cut at %d MiB]\n", maxLog>>20)...)
	}
	return os.WriteFile(path, reports.Scrub(b), 0o644)
}

// printDeviations prints the short summary of the deviations a run found
// that FAIL, three lines each: the invariant and the counterexample's
// shopper steps, its report (reportDir/d.Report) and the command that
// replays it. A KNOWN one (the baseline lists it) is left out.
func printDeviations(stderr io.Writer, reportDir string, devs []reports.Deviation) {
	for i, d := range devs {
		if d.Verdict == reports.Known {
			continue
		}
		line := fmt.Sprintf("idemcheck: deviation %d, %s: %s violated after %d shopper steps", i+1, d.Verdict, d.Invariant, d.Steps)
		if d.Minimal != "" {
			line += " (" + d.Minimal + ")"
		}
		fmt.Fprintln(stderr, line)
		if d.Report != "" {
			fmt.Fprintf(stderr, "    report: %s\n", filepath.Join(reportDir, d.Report))
		}
		if d.Replay != "" {
			fmt.Fprintf(stderr, "    replay: %s\n", d.Replay)
		}
	}
}

// oneCause is the reason every requirement is INCONCLUSIVE for, when it
// is one and no invariant was judged (the preflight found the provider
// unreachable, or not of the dialect).
func oneCause(reqs []reports.RequirementResult, invs []reports.InvariantResult) (string, bool) {
	if len(reqs) == 0 || len(invs) > 0 {
		return "", false
	}
	for _, r := range reqs {
		if r.Verdict != reports.Inconclusive || r.Reason != reqs[0].Reason {
			return "", false
		}
	}
	return reqs[0].Reason, true
}

// printInconclusive prints, for an INCONCLUSIVE run, one line per
// INCONCLUSIVE requirement and invariant with its reason, in the page's
// order; a reason the line before gave is "as above".
func printInconclusive(stderr io.Writer, reqs []reports.RequirementResult, invs []reports.InvariantResult) {
	last := ""
	line := func(kind, name, reason string) {
		if reason == "" {
			reason = "no reason given"
		}
		shown := reason
		if reason == last {
			shown = "as above"
		}
		last = reason
		fmt.Fprintf(stderr, "idemcheck: INCONCLUSIVE %s %s: %s\n", kind, name, shown)
	}
	for _, r := range reqs {
		if r.Verdict == reports.Inconclusive {
			line("requirement", r.ID, r.Reason)
		}
	}
	for _, i := range invs {
		if i.Verdict == reports.Inconclusive {
			line("invariant", i.Name, i.Reason)
		}
	}
}
