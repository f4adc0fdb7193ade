package main_test

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/reports"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runStats reads the stats.json of the one run folder under dir matching
// glob.
func runStats(t *testing.T, dir, glob string) (reports.RunStats, string) {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, glob, reports.StatsFile))
	require.Len(t, paths, 1, "one %s under %s", glob, dir)
	s, err := reports.ReadRunStats(filepath.Dir(paths[0]))
	require.NoError(t, err)
	return s, filepath.Dir(paths[0])
}

// junitTests counts the testcases of a JUnit file, after checking its shape.
func junitTests(t *testing.T, path string) int {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, reports.ValidateJUnit(raw), path)
	var root reports.JUnitSuites
	require.NoError(t, xml.Unmarshal(raw, &root))
	return root.Tests
}

// TestMergeShards: two shards of one run (IDEMCHECK_SHARD=0/2 and 1/2,
// each two properties at once), merged: the merged statistics are the sums
// of the shards' own, its JUnit file holds both shards' cases and the
// merged invariants, and the index lists the merged run and both shards.
// A failing run fails the merge.
func TestMergeShards(t *testing.T) {
	dir := t.TempDir()
	var parts []reports.RunStats
	var junit int
	for i, shard := range []string{"0/2", "1/2"} {
		rd := filepath.Join(dir, "shard-"+string(rune('0'+i)))
		code, _, stderr := idemcheckIn(t, dir, []string{"IDEMCHECK_SHARD=" + shard, "IDEMCHECK_PARALLEL=2"}, "run", "--checks", "6", "--seed", "3", "--report-dir", rd)
		require.Equal(t, 0, code, stderr)
		s, folder := runStats(t, rd, "*")
		assert.Equal(t, shard, s.Shard)
		assert.Equal(t, 6, s.Coverage.Sequences)
		parts = append(parts, s)
		junit += junitTests(t, filepath.Join(folder, reports.PropertyJUnitFile))
	}
	out := filepath.Join(dir, "merged")
	code, stdout, stderr := idemcheckIn(t, dir, nil, "merge", "-o", out, filepath.Join(dir, "shard-0"), filepath.Join(dir, "shard-1"))
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, filepath.Join(out, "index.md"), strings.TrimSpace(stdout))
	m, folder := runStats(t, out, "*-merged")
	assert.Equal(t, reports.Pass, m.Verdict)
	want := reports.Coverage{Faults: map[string]int{}}
	evals, subjects := map[string]int{}, map[string]int{}
	for _, p := range parts {
		want.Sequences += p.Coverage.Sequences
		want.Steps += p.Coverage.Steps
		want.Exchanges += p.Coverage.Exchanges
		for k, v := range p.Coverage.Faults {
			want.Faults[k] += v
		}
		for _, i := range p.Invariants {
			evals[i.Name] += i.Evaluations
			subjects[i.Name] += i.Subjects
		}
	}
	assert.Equal(t, want, m.Coverage)
	require.Len(t, m.Invariants, len(parts[0].Invariants))
	for _, i := range m.Invariants {
		assert.Equal(t, evals[i.Name], i.Evaluations, i.Name)
		assert.Equal(t, subjects[i.Name], i.Subjects, i.Name)
	}
	assert.Equal(t, junit+len(m.Invariants), junitTests(t, filepath.Join(folder, reports.MergedJUnitFile)))
	summary, err := os.ReadFile(filepath.Join(folder, reports.MergedFile))
	require.NoError(t, err)
	assert.Contains(t, string(summary), reports.StatsSummary(m))
	index, err := os.ReadFile(filepath.Join(out, "index.md"))
	require.NoError(t, err)
	assert.Equal(t, 3, strings.Count(string(index), "| property |")+strings.Count(string(index), "| merged |"), string(index))

	// A merge of the merge counts each shard once (the merged run is skipped).
	again := filepath.Join(dir, "again")
	code, _, stderr = idemcheckIn(t, dir, nil, "merge", "-o", again, out)
	require.Equal(t, 0, code, stderr)
	m2, _ := runStats(t, again, "*-merged")
	assert.Equal(t, m.Coverage, m2.Coverage)

	// A failing run among the parts fails the merge.
	bad := filepath.Join(dir, "bad")
	code, _, stderr = idemcheckIn(t, dir, nil, "run", "--mutant", "fresh-key-per-request", "--checks", "20", "--report-dir", bad)
	require.Equal(t, 1, code, stderr)
	code, _, stderr = idemcheckIn(t, dir, nil, "merge", "-o", filepath.Join(dir, "merged-bad"), filepath.Join(dir, "shard-0"), bad)
	require.Equal(t, 1, code, stderr)
	mb, _ := runStats(t, filepath.Join(dir, "merged-bad"), "*-merged")
	assert.Equal(t, reports.Fail, mb.Verdict)
	for _, i := range mb.Invariants {
		if i.Name == "one-key-per-intent" {
			assert.Equal(t, reports.Fail, i.Verdict)
		}
	}
}

// TestMergeAndShardUsage: merge's help; merge with nothing to merge, or a
// folder without a run, and a shard out of range are usage errors (exit 2).
func TestMergeAndShardUsage(t *testing.T) {
	dir := t.TempDir()
	if code, stdout, _ := idemcheckIn(t, dir, nil, "help", "merge"); code != 0 || !strings.Contains(stdout, "Usage: idemcheck merge [-o OUT] DIR...") || !strings.Contains(stdout, "-o folder") {
		t.Errorf("idemcheck help merge: exit %d, stdout %q", code, stdout)
	}
	if code, _, stderr := idemcheckIn(t, dir, nil, "merge"); code != 2 {
		t.Errorf("merge without a folder: exit %d, want 2; stderr:\n%s", code, stderr)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := idemcheckIn(t, dir, nil, "merge", empty)
	if code != 2 || !strings.Contains(stderr, "holds no run folder") {
		t.Errorf("merge of an empty folder: exit %d, want 2 saying it holds no run folder; stderr:\n%s", code, stderr)
	}
	for _, shard := range []string{"2/2", "-1/3", "1/0", "x"} {
		code, _, stderr := idemcheckIn(t, dir, []string{"IDEMCHECK_SHARD=" + shard}, "run", "--checks", "1")
		if code != 2 || !strings.Contains(stderr, `IDEMCHECK_SHARD="`+shard+`" is not a shard i/n with 0 ≤ i < n`) {
			t.Errorf("run with IDEMCHECK_SHARD=%s: exit %d, want 2 naming the variable; stderr:\n%s", shard, code, stderr)
		}
	}
}

// TestCertifyShardSharesBudgets: a certification run as shard 1 of 4 gets
// a quarter of each budget (the requests asked for, the default charges
// and duration), a merge of its report folder counts its sequences once
// (the certification's and its property run's folders hold the same) and
// has its verdict, and a shard out of range is refused before anything
// is sent.
func TestCertifyShardSharesBudgets(t *testing.T) {
	url := serve(t)
	dir := t.TempDir()
	rd := filepath.Join(dir, "cert")
	profile, err := filepath.Abs(profile) // the run starts in dir
	require.NoError(t, err)
	code, stdout, stderr := idemcheckIn(t, dir, []string{"IDEMCHECK_SHARD=1/4"}, "certify", url, "--profile", profile, "--checks", "5", "--budget-requests", "40000", "--report-dir", rd)
	// PASS, or INCONCLUSIVE when 5 sequences left an invariant vacuous.
	require.Contains(t, []int{0, 3}, code, stderr)
	certCode := code
	var c reports.Certification
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(strings.TrimSpace(stdout)), "certification.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &c))
	limits := map[string]string{}
	for _, b := range c.Budgets {
		limits[b.Name] = b.Limit
	}
	assert.Equal(t, map[string]string{"requests": "10000", "charges": "2500", "duration": "7m30s"}, limits)
	require.Positive(t, c.Coverage.Sequences)

	out := filepath.Join(dir, "merged")
	code, _, stderr = idemcheckIn(t, dir, nil, "merge", "-o", out, rd)
	require.Equal(t, certCode, code, "the merge's verdict is the certification's; stderr:\n%s", stderr)
	m, _ := runStats(t, out, "*-merged")
	assert.Equal(t, c.Coverage.Sequences, m.Coverage.Sequences)
	assert.Equal(t, c.Coverage.Exchanges, m.Coverage.Exchanges)

	code, _, stderr = idemcheckIn(t, dir, []string{"IDEMCHECK_SHARD=4/4"}, "certify", url, "--profile", profile, "--report-dir", rd)
	if code != 2 || !strings.Contains(stderr, "refused, nothing sent") || !strings.Contains(stderr, `IDEMCHECK_SHARD="4/4"`) {
		t.Errorf("certify with IDEMCHECK_SHARD=4/4: exit %d, want 2 refusing it; stderr:\n%s", code, stderr)
	}
}
