package conformance_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/idemcheck/idemcheck/reports"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParallelRunsOneSummary: IDEMCHECK_PARALLEL=2 runs the subtests p0
// and p1, each with its share of -rapid.checks, and writes one summary
// whose sequences are every check of both; the same seed draws the same
// steps and faults again.
func TestParallelRunsOneSummary(t *testing.T) {
	var first reports.RunStats
	for i := range 2 {
		out, failed, dir := runConformance(t, "7", "IDEMCHECK_PARALLEL=2", "RAPID_CHECKS=21")
		require.False(t, failed, out)
		assert.Contains(t, out, "=== RUN   TestConformance/p0\n")
		assert.Contains(t, out, "=== RUN   TestConformance/p1\n")
		assert.Contains(t, out, "[rapid] OK, passed 11 tests")
		assert.Contains(t, out, "[rapid] OK, passed 10 tests")
		assert.Contains(t, out, "property 1 of 2 starts at seed 9223372036854775814 (-rapid.seed=7)")
		folders, _ := filepath.Glob(filepath.Join(dir, "*", "run.json"))
		require.Len(t, folders, 1, "one index entry for both properties")
		s, err := reports.ReadRunStats(filepath.Dir(folders[0]))
		require.NoError(t, err)
		assert.Equal(t, "TestConformance", s.Test)
		assert.Equal(t, 2, s.Parallel)
		assert.Equal(t, 21, s.Coverage.Sequences, "p0's 11 and p1's 10")
		assert.Contains(t, out, "idemcheck: 21 sequences, ")
		if i == 0 {
			first = s
			continue
		}
		// The same seed draws the same sequences: their steps and faults.
		// (Not always the same exchanges: how concurrent requests interleave
		// in the bubble varies by a few, with one property as with two.)
		assert.Equal(t, first.Coverage.Steps, s.Coverage.Steps, "the same seed, the same sequences")
		assert.Equal(t, first.Coverage.Faults, s.Coverage.Faults, "the same seed, the same fault schedules")
	}
}

// TestParallelNeverMorePropertiesThanChecks: IDEMCHECK_PARALLEL beyond
// -rapid.checks runs one property a check. Regression (breaker):
// IDEMCHECK_PARALLEL=100000 with 4 checks started 100 000 properties
// (26 s, 1.2 GB) for 4 sequences.
func TestParallelNeverMorePropertiesThanChecks(t *testing.T) {
	out, failed, _ := runConformance(t, "7", "IDEMCHECK_PARALLEL=64", "RAPID_CHECKS=3")
	require.False(t, failed, out)
	assert.Contains(t, out, "idemcheck: 3 properties at once")
	assert.Contains(t, out, "=== RUN   TestConformance/p2\n")
	assert.NotContains(t, out, "TestConformance/p3")
}

// TestParallelFailureNamesItsSubtest: a property of a parallel run that
// fails is reported as a lone run's failure is, its replay line naming its
// subtest and its own fail file, which replays the failure.
func TestParallelFailureNamesItsSubtest(t *testing.T) {
	out, failed, dir := runConformance(t, "1", "IDEMCHECK_PARALLEL=2", "IDEMCHECK_MUTANT=fresh-key-per-request", "RAPID_CHECKS=20")
	require.True(t, failed, out)
	re := regexp.MustCompile(`replay: IDEMCHECK_MUTANT=fresh-key-per-request IDEMCHECK_PARALLEL=1 go test \./conformance -run '\^TestConformance\$/\^fresh-key-per-request\$/\^(p[01])\$' -rapid\.failfile=(testdata/rapid/TestConformance_fresh-key-per-request_(p[01])/\S+\.fail)`)
	m := re.FindStringSubmatch(out)
	require.NotNil(t, m, "no replay line naming a subtest and its fail file:\n%s", out)
	assert.Equal(t, m[1], m[3], "the fail file is the failing subtest's")
	require.FileExists(t, filepath.Join(filepath.Dir(dir), m[2]))
	assert.NoFileExists(t, reportFile(dir, "fresh-key-per-request", "summary.md"), "a failing run writes no summary")
	stats, _ := filepath.Glob(filepath.Join(dir, "*_"+m[1], reports.StatsFile))
	require.Len(t, stats, 1, "the failing property's folder keeps its statistics")
	s, err := reports.ReadRunStats(filepath.Dir(stats[0]))
	require.NoError(t, err)
	assert.Equal(t, reports.Fail, s.Verdict)

	// The replay line, as a user runs it: that subtest alone, its fail file.
	cmd := exec.Command(os.Args[0], "-test.run=^TestConformance$/^fresh-key-per-request$/^"+m[1]+"$", "-test.v", "-rapid.failfile="+m[2], "-rapid.checks=0")
	cmd.Dir = filepath.Dir(dir)
	cmd.Env = append(os.Environ(), "IDEMCHECK_PROVIDER=embedded", "IDEMCHECK_PROVIDER_STORE=memory", "IDEMCHECK_MUTANT=fresh-key-per-request",
		"IDEMCHECK_PARALLEL=1", "IDEMCHECK_REPORT_DIR="+t.TempDir(), "GITHUB_STEP_SUMMARY=", "IDEMCHECK_REPRODUCE=0")
	b, err := cmd.CombinedOutput()
	require.Error(t, err, "the replay passed:\n%s", b)
	assert.Contains(t, string(b), "idemcheck: one-key-per-intent violated")
}
