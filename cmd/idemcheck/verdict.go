package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/idemcheck/idemcheck/reports"
)

// verdictLine writes the last line a verb prints on stderr: the verdict,
// the counts behind it and where the report is, with the run folder's
// report.html when it has one — "idemcheck: FAIL · requirements (33): 7
// PASS, 9 FAIL, 0 INCONCLUSIVE, 1 NOT JUDGED; … · report:
// idemcheck-reports/<run>/certification.md · html:
// idemcheck-reports/<run>/report.html".
func verdictLine(w io.Writer, v reports.Verdict, counts, report string) {
	line := "idemcheck: " + string(v)
	if counts != "" {
		line += " · " + counts
	}
	if report != "" {
		line += " · report: " + report
		if html := filepath.Join(filepath.Dir(report), reports.ReportFile); report != html {
			if _, err := os.Stat(html); err == nil {
				line += " · html: " + html
			}
		}
	}
	fmt.Fprintln(w, line)
}

// propertyCounts is a property run's invariants counted, and its
// deviations when it found some: "invariants (14): 13 PASS, 1 FAIL, …;
// deviations (1): 1 FAIL".
func propertyCounts(invariants []reports.InvariantResult, devs []reports.Deviation) string {
	return reports.Certification{Invariants: invariants, Deviations: devs}.PropertyCounts()
}

// runReport is the main report of the run folder folder: its catalogue of
// deviations, its failure report or its summary, whichever it holds
// first; else index, the report directory's index.
func runReport(folder, index string) string {
	if folder != "" {
		for _, name := range []string{"catalogue.md", "failure.md", "summary.md"} {
			p := filepath.Join(folder, name)
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	return index
}
