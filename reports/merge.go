package reports

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Merging run folders (idemcheck merge): the shards of one sharded run, or
// any runs, folded into one report directory with one merged entry.

// MergedFile, MergedJUnitFile: the merged run's summary and JUnit file, in
// its folder beside stats.json and run.json.
const (
	MergedFile      = "summary.md"
	MergedJUnitFile = "merged.junit.xml"
)

// MergeKind is the RunEntry.Kind of a merged run. MergeRuns skips such
// entries in its inputs: their parts are beside them and are counted once.
const MergeKind = "merged"

// MergePart is one run folded into a merge.
type MergePart struct {
	// Folder is the run's folder name in the merged directory.
	Folder string
	Entry  RunEntry
	// Stats are the run's statistics, its stats.json; nil for a run that
	// kept none (a certification, whose property run beside it has them;
	// a run written before stats.json existed): its verdict still counts.
	Stats *RunStats
}

// Merged is the result of MergeRuns.
type Merged struct {
	// Dir is the merged directory, Folder the merged run's folder in it.
	Dir, Folder string
	Parts       []MergePart
	// Stats sums the parts' statistics: coverage, faults and per-invariant
	// evaluations and subjects; Seconds is the parts' wall times summed.
	Stats   RunStats
	Verdict Verdict
}

// MergeRuns folds the runs under dirs into out: every run folder found (a
// dir that holds run.json is one run folder, else each dir/*/run.json is)
// is copied into out (a name taken by another input gets "-2", "-3"…), and
// a merged run is written beside them (folder RunFolder(now, "merged")):
// summary.md (the summed statistics, as a run prints them, and a row per
// part), stats.json (RunStats of the sum), merged.junit.xml (every
// part's JUnit suites, renamed after their folder, and a suite of the
// merged invariants), run.json, the parts in the order they started;
// then out/index.md is rebuilt, listing the
// merged run and its parts. Its verdict is the worst of the parts' (FAIL
// if any is). An input with no run folder is an error.
func MergeRuns(out string, dirs []string, now time.Time) (Merged, error) {
	m := Merged{Dir: out}
	var srcs []string
	for _, d := range dirs {
		found, err := runFolders(d)
		if err != nil {
			return m, err
		}
		srcs = append(srcs, found...)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return m, fmt.Errorf("reports: %w", err)
	}
	m.Folder = RunFolder(now, MergeKind)
	taken := map[string]bool{m.Folder: true}
	var junit []JUnitSuite
	var verdicts []Verdict
	for _, src := range srcs {
		e, err := readEntry(src)
		if err != nil {
			return m, err
		}
		if e.Kind == MergeKind {
			continue
		}
		name := filepath.Base(src)
		for i := 2; taken[name]; i++ {
			name = fmt.Sprintf("%s-%d", filepath.Base(src), i)
		}
		taken[name] = true
		if err := copyFolder(src, filepath.Join(out, name)); err != nil {
			return m, err
		}
		p := MergePart{Folder: name, Entry: e, Stats: partStats(src)}
		m.Parts = append(m.Parts, p)
		verdicts = append(verdicts, e.Verdict)
		suites, err := partJUnit(src, name)
		if err != nil {
			return m, err
		}
		junit = append(junit, suites...)
	}
	if len(m.Parts) == 0 {
		return m, fmt.Errorf("reports: no run folder (a folder with %s) in %s", runFile, strings.Join(dirs, ", "))
	}
	sort.SliceStable(m.Parts, func(i, j int) bool { // as they ran (a shell's shard-* puts shard-10 before shard-2)
		return m.Parts[i].Entry.Started.Before(m.Parts[j].Entry.Started)
	})
	m.Verdict = worst(verdicts)
	m.Stats = sumStats(m.Parts, now)
	m.Stats.Verdict = m.Verdict
	d := time.Duration(m.Stats.Seconds * float64(time.Second))
	junit = append(junit, junitSuite("merged: invariants", now, d, invariantCases(m.Stats.Invariants)))
	xmlOut, err := encodeJUnit("idemcheck merge", d, junit...)
	if err != nil {
		return m, err
	}
	js, err := json.MarshalIndent(m.Stats, "", "  ")
	if err != nil {
		return m, fmt.Errorf("reports: %w", err)
	}
	md := mergedMarkdown(m)
	e := RunEntry{RunID: MergeKind, Kind: MergeKind, Started: now, Verdict: m.Verdict,
		Summary: fmt.Sprintf("%d runs: %s", len(m.Parts), firstLine(StatsSummary(m.Stats))), Report: MergedFile}
	files := map[string][]byte{MergedFile: md, StatsFile: append(js, '\n'), MergedJUnitFile: xmlOut}
	return m, writeRun(out, m.Folder, e, files)
}

// runFolders is dir itself when it holds run.json, else its run folders.
func runFolders(dir string) ([]string, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("reports: %s is not a folder", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, runFile)); err == nil {
		return []string{dir}, nil
	}
	paths, err := filepath.Glob(filepath.Join(dir, "*", runFile))
	if err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("reports: %s holds no run folder (no %s in it or in a folder of it)", dir, runFile)
	}
	sort.Strings(paths)
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Dir(p)
	}
	return out, nil
}

func readEntry(dir string) (RunEntry, error) {
	var e RunEntry
	return e, readJSON(filepath.Join(dir, runFile), &e)
}

// readJSON decodes the JSON file path into v.
func readJSON(path string, v any) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reports: %w", err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("reports: %s: %w", path, err)
	}
	return nil
}

// partStats reads a run's stats.json; nil when it has none. A
// certification keeps none of its own: its property run, a folder of its
// own beside it, holds the same statistics (counted once).
func partStats(dir string) *RunStats {
	if s, err := ReadRunStats(dir); err == nil {
		return &s
	}
	return nil
}

// partJUnit reads every *.junit.xml of a run folder, each suite renamed
// "<folder>: <suite>".
func partJUnit(dir, folder string) ([]JUnitSuite, error) {
	paths, _ := filepath.Glob(filepath.Join(dir, "*.junit.xml"))
	sort.Strings(paths)
	var out []JUnitSuite
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("reports: %w", err)
		}
		var root JUnitSuites
		if err := xml.Unmarshal(raw, &root); err != nil {
			return nil, fmt.Errorf("reports: %s: %w", p, err)
		}
		for _, s := range root.Suites {
			s.Name = folder + ": " + s.Name
			out = append(out, s)
		}
	}
	return out, nil
}

// copyFolder copies the regular files of src (and its folders) into dst.
func copyFolder(src, dst string) error {
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil // no links out of the run folder
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, raw, fi.Mode().Perm())
	})
	if err != nil {
		return fmt.Errorf("reports: copying %s: %w", src, err)
	}
	return nil
}
