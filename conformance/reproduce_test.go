package conformance_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/idemcheck/idemcheck/conformance"
	"github.com/idemcheck/idemcheck/reports"
)

func TestCheckReproducibleCounts(t *testing.T) {
	calls := 0
	rep, err := conformance.CheckReproducible(context.Background(), 0, func(context.Context) (bool, error) {
		calls++
		return calls%3 != 0, nil
	})
	require.NoError(t, err)
	assert.Equal(t, conformance.DefaultReplays, calls, "default: 10 replays")
	assert.Equal(t, reports.Reproducibility{Runs: 10, Reproduced: 7}, rep)
	assert.Equal(t, "flaky (7/10)", rep.String())

	_, err = conformance.CheckReproducible(context.Background(), 5, func(context.Context) (bool, error) {
		return false, errors.New("no test binary")
	})
	assert.ErrorContains(t, err, "replay 1 of 5: no test binary")
}

// timingFixtureEnv switches TestReproducibilityCheckSeesTimingDependence
// into its fixture role in a child process.
const timingFixtureEnv = "IDEMCHECK_TIMING_FIXTURE"

// timingFixture is a property that is deliberately NOT reproducible: it is
// a fixture, not a check of anything. Whether it fails depends on the real
// wall clock (the parity of the current microsecond), not on what rapid
// drew, as a failure that needs a slow network or a lucky interleaving
// would. Each replay fails with probability 1/2.
func timingFixture(t *rapid.T) {
	n := rapid.IntRange(0, 3).Draw(t, "n")
	if n > 0 && time.Now().UnixMicro()%2 == 1 {
		t.Fatalf("timing fixture: the wall clock was odd")
	}
}

// TestReproducibilityCheckSeesTimingDependence: replaying the fail file of
// a timing-dependent failure says "flaky (k/N)", not "reproduced". Run as a
// child with IDEMCHECK_TIMING_FIXTURE=1 it is the fixture itself. It replays
// 30 times, not the default 10, so that the test itself does not flake: the
// verdict is wrong only when 30 fair coin flips all agree, p = 2/2^30.
func TestReproducibilityCheckSeesTimingDependence(t *testing.T) {
	if os.Getenv(timingFixtureEnv) == "1" {
		rapid.Check(t, timingFixture)
		return
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	pattern := "^" + t.Name() + "$"
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run="+pattern, "-rapid.seed=1")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), timingFixtureEnv+"=1")
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "the fixture fails within 100 checks; output:\n%s", out)
	failFiles, _ := filepath.Glob(filepath.Join(dir, "testdata", "rapid", "*", "*.fail"))
	require.Len(t, failFiles, 1, "rapid keeps one fail file; output:\n%s", out)

	replay := conformance.ChildReplay(os.Args[0], pattern, failFiles[0], "timing fixture:", []string{timingFixtureEnv + "=1"})
	rep, err := conformance.CheckReproducible(ctx, 30, replay)
	require.NoError(t, err)
	assert.Equal(t, 30, rep.Runs)
	assert.True(t, rep.Flaky(), "a wall-clock failure must not pass for deterministic: %s", rep)
	assert.True(t, strings.HasPrefix(rep.String(), "flaky ("), rep.String())
	t.Logf("timing fixture: %s", rep)
}

// TestReproducibilityCheckReproducesAMutant: the same check on the shrunk
// failure of an in-process mutant run (virtual time, a drawn schedule)
// reproduces it every time.
func TestReproducibilityCheckReproducesAMutant(t *testing.T) {
	t.Parallel() // child processes, one at a time: beside another such test
	out, failed, dir := runConformance(t, "2", "IDEMCHECK_MUTANT=no-fingerprint")
	require.True(t, failed, out)
	failFiles, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), "testdata", "rapid", "*", "*.fail"))
	require.Len(t, failFiles, 1, out)
	env := []string{"IDEMCHECK_PROVIDER=embedded", "IDEMCHECK_MUTANT=no-fingerprint", "IDEMCHECK_REPORT_DIR=" + t.TempDir(), "IDEMCHECK_REPRODUCE=0", "GITHUB_STEP_SUMMARY="}
	replay := conformance.ChildReplay(os.Args[0], "^TestConformance$/^no-fingerprint$", failFiles[0],
		"idemcheck: mismatch-rejected violated", env)
	rep, err := conformance.CheckReproducible(context.Background(), 0, replay)
	require.NoError(t, err)
	assert.Equal(t, "reproduced 10/10", rep.String())

	t.Run("a replay that does not fail the same way is not counted", func(t *testing.T) {
		other := conformance.ChildReplay(os.Args[0], "^TestConformance$/^no-fingerprint$", failFiles[0],
			"idemcheck: books-balance violated", env)
		rep, err := conformance.CheckReproducible(context.Background(), 2, other)
		require.NoError(t, err)
		assert.Equal(t, "flaky (0/2)", rep.String())
	})
}
