package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/idemcheck/idemcheck/reports"
)

const mergeAbout = `Fold the run folders of several runs (the shards of one IDEMCHECK_SHARD=i/n
run, each a report directory or a single run folder) into one report directory:
every run folder is copied in, and a merged run beside them holds one summary
(sequences, steps, exchanges, faults and each invariant's evaluations summed),
one JUnit file (every part's suites and the merged invariants) and stats.json;
index.md lists them all. Any FAIL fails the merge. docs/sharding.md has the
recipe for a CI matrix.`

// mergeMain is idemcheck merge.
func mergeMain(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("merge", stderr)
	out := fs.String("o", "idemcheck-merged", "`folder` to write the merged report directory to")
	pos, code, ok := parse(fs, args, stdout)
	if !ok {
		return code
	}
	if len(pos) == 0 {
		return usageError(stderr, fs, "no run folder to merge (idemcheck merge DIR... [-o OUT])")
	}
	m, err := reports.MergeRuns(*out, pos, time.Now())
	if err != nil {
		fmt.Fprintf(stderr, "idemcheck merge: %v\n", err)
		return exitUsage
	}
	c := m.Stats.Coverage
	fmt.Fprintf(stderr, "idemcheck merge: %d runs, %s: %d sequences, %d steps, %d wire exchanges\n", len(m.Parts), m.Verdict, c.Sequences, c.Steps, c.Exchanges)
	var runs []reports.Verdict
	for _, p := range m.Parts {
		runs = append(runs, p.Entry.Verdict)
	}
	counts := "runs " + reports.CountVerdicts(runs)
	if inv := propertyCounts(m.Stats.Invariants, nil); inv != "" {
		counts += "; " + inv
	}
	verdictLine(stderr, m.Verdict, counts, filepath.Join(m.Dir, m.Folder, "summary.md"))
	fmt.Fprintln(stdout, filepath.Join(m.Dir, reports.IndexFile))
	switch m.Verdict {
	case reports.Fail:
		return exitFail
	case reports.Inconclusive:
		return exitInconclusive
	}
	return exitPass
}
