package reports

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
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
// merged run and its parts. Its verdict is the worst of the parts' and of
// the merged invariants' (FAIL if any is). Each run counts once (a folder
// given twice, a merged folder's copy of a part given beside it); the
// inputs must not overlap out; every file read is a regular file of at
// most 64 MiB; and nothing is written unless every part reads well. An
// input with no run folder is an error.
func MergeRuns(out string, dirs []string, now time.Time) (Merged, error) {
	m := Merged{Dir: out}
	srcs, err := mergeSources(out, dirs)
	if err != nil {
		return m, err
	}
	m.Folder = RunFolder(now, MergeKind)
	taken := map[string]bool{m.Folder: true}
	seen := map[string]bool{} // a run's identity: one already taken (a copy in a merged folder) is counted once
	var junit []JUnitSuite
	var verdicts []Verdict
	var copies [][2]string
	// Everything is read and checked before anything is written.
	for _, src := range srcs {
		e, err := readEntry(src)
		if err != nil {
			return m, err
		}
		id := e.Kind + "\x00" + e.RunID + "\x00" + e.Started.UTC().Format(time.RFC3339Nano)
		if e.Kind == MergeKind || seen[id] {
			continue
		}
		seen[id] = true
		stats, err := partStats(src)
		if err != nil {
			return m, err
		}
		name := filepath.Base(src)
		for i := 2; taken[name]; i++ {
			name = fmt.Sprintf("%s-%d", filepath.Base(src), i)
		}
		taken[name] = true
		p := MergePart{Folder: name, Entry: e, Stats: stats}
		m.Parts = append(m.Parts, p)
		verdicts = append(verdicts, e.Verdict)
		suites, err := partJUnit(src, name)
		if err != nil {
			return m, err
		}
		junit = append(junit, suites...)
		copies = append(copies, [2]string{src, filepath.Join(out, name)})
	}
	if len(m.Parts) == 0 {
		return m, fmt.Errorf("reports: no run folder (a folder with %s) in %s", runFile, strings.Join(dirs, ", "))
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return m, fmt.Errorf("reports: %w", err)
	}
	for _, c := range copies {
		if err := copyFolder(c[0], c[1]); err != nil {
			return m, err
		}
	}
	sort.SliceStable(m.Parts, func(i, j int) bool { // as they ran (a shell's shard-* puts shard-10 before shard-2)
		return m.Parts[i].Entry.Started.Before(m.Parts[j].Entry.Started)
	})
	m.Stats = sumStats(m.Parts, now)
	for _, inv := range m.Stats.Invariants {
		verdicts = append(verdicts, inv.Verdict) // an invariant a part's stats failed fails the merge, whatever its run.json says
	}
	m.Verdict = worst(verdicts)
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

// maxMergeFile bounds each file merge reads (run.json, stats.json, a
// JUnit file): a run's are kilobytes.
const maxMergeFile = 64 << 20

// readBounded reads path, a regular file (not a link, a FIFO or a
// device) of at most maxMergeFile bytes.
func readBounded(path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("reports: %s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	defer func() { _ = f.Close() }()
	raw, err := io.ReadAll(io.LimitReader(f, maxMergeFile+1))
	if err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	if len(raw) > maxMergeFile {
		return nil, fmt.Errorf("reports: %s is larger than %d MiB: not a run's file", path, maxMergeFile>>20)
	}
	return raw, nil
}

// readJSON decodes the JSON file path (readBounded) into v.
func readJSON(path string, v any) error {
	raw, err := readBounded(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("reports: %s: %w", path, err)
	}
	return nil
}

// mergeSources is the run folders of dirs, each by its real path (links
// resolved, "." and ".." gone), each once; an input that is out, holds it
// or lies in it is refused (a merge would copy its output into itself).
func mergeSources(out string, dirs []string) ([]string, error) {
	o, err := realPath(out)
	if err != nil {
		return nil, err
	}
	var srcs []string
	seen := map[string]bool{}
	for _, d := range dirs {
		r, err := realPath(d)
		if err != nil {
			return nil, err
		}
		if within(o, r) || within(r, o) {
			return nil, fmt.Errorf("reports: the output folder %s and the input %s overlap: merge into a folder outside every input", out, d)
		}
		found, err := runFolders(r)
		if err != nil {
			return nil, err
		}
		for _, f := range found {
			if !seen[f] {
				seen[f] = true
				srcs = append(srcs, f)
			}
		}
	}
	return srcs, nil
}

// realPath is p absolute with its links resolved; for a path that does
// not exist yet (an output folder), its deepest existing parent's.
func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("reports: %w", err)
	}
	var rest []string
	for {
		r, err := filepath.EvalSymlinks(abs)
		if err == nil {
			return filepath.Join(append([]string{r}, rest...)...), nil
		}
		parent := filepath.Dir(abs)
		if !os.IsNotExist(err) || parent == abs {
			return "", fmt.Errorf("reports: %w", err)
		}
		rest = append([]string{filepath.Base(abs)}, rest...)
		abs = parent
	}
}

// within reports whether path p is dir or inside it.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// partStats reads a run's stats.json; nil when it has none (a
// certification keeps none of its own: its property run, a folder of its
// own beside it, holds the same statistics, counted once; a run written
// before stats.json existed). One it cannot read, or with a negative
// count, is an error.
func partStats(dir string) (*RunStats, error) {
	if _, err := os.Lstat(filepath.Join(dir, StatsFile)); os.IsNotExist(err) {
		return nil, nil
	}
	s, err := ReadRunStats(dir)
	if err != nil {
		return nil, err
	}
	c := s.Coverage
	if c.Sequences < 0 || c.Steps < 0 || c.Exchanges < 0 {
		return nil, fmt.Errorf("reports: %s: negative counts", filepath.Join(dir, StatsFile))
	}
	return &s, nil
}

// partJUnit reads every *.junit.xml of a run folder, each suite renamed
// "<folder>: <suite>".
func partJUnit(dir, folder string) ([]JUnitSuite, error) {
	paths, _ := filepath.Glob(filepath.Join(dir, "*.junit.xml"))
	sort.Strings(paths)
	var out []JUnitSuite
	for _, p := range paths {
		raw, err := readBounded(p)
		if err != nil {
			return nil, err
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
		return copyFile(p, target)
	})
	if err != nil {
		return fmt.Errorf("reports: copying %s: %w", src, err)
	}
	return nil
}

// copyFile streams the regular file src to dst.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	outf, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(outf, in); err != nil {
		_ = outf.Close()
		return err
	}
	return outf.Close()
}
