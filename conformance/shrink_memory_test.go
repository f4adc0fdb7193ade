package conformance_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// peakFileEnv names the file a child run of this package writes its own
// peak memory to, in KiB, when it ends (TestMain, writePeak), or as soon
// as it passes peakCapKiB: it then exits at once with status 3, so that a
// run whose memory grows without bound (issue 22: to 22 GB on this test's
// set-up) does not take the machine with it.
//
// The peak is the most the Go runtime held from the operating system
// (runtime/metrics' /memory/classes/total:bytes, taken every 100 ms and
// at the end): the process's resident memory but for the race detector's
// shadow memory, which under make test's -race alone doubles a run's
// VmHWM.
const peakFileEnv = "IDEMCHECK_TEST_PEAK_FILE"

// peakCapKiB is where a child run with peakFileEnv set stops itself: 400
// MiB, four times the promise this test holds it to.
const peakCapKiB = 400 * 1024

// peakKiB is the most goTotalKiB has been (watchPeak).
var peakKiB atomic.Int64

// goTotalKiB is the memory the Go runtime holds from the operating
// system now, in KiB.
func goTotalKiB() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64() / 1024)
}

// notePeak takes goTotalKiB into peakKiB and returns the peak.
func notePeak() int64 {
	now := goTotalKiB()
	for {
		was := peakKiB.Load()
		if now <= was {
			return was
		}
		if peakKiB.CompareAndSwap(was, now) {
			return now
		}
	}
}

// watchPeak starts, in a child run with peakFileEnv set, the watch that
// notes its peak and stops it past peakCapKiB (every 100 ms: it ends with
// the process).
func watchPeak() {
	path := os.Getenv(peakFileEnv)
	if path == "" {
		return
	}
	go func() {
		for range time.Tick(100 * time.Millisecond) {
			if kb := notePeak(); kb > peakCapKiB {
				_ = os.WriteFile(path, []byte(strconv.FormatInt(kb, 10)), 0o644)
				fmt.Fprintf(os.Stderr, "idemcheck test: peak memory %d MB passed %d MB: stopped\n", kb/1024, peakCapKiB/1024)
				os.Exit(3)
			}
		}
	}()
}

// writePeak writes this process's peak memory, in KiB, to the file
// peakFileEnv names, if any.
func writePeak() {
	if path := os.Getenv(peakFileEnv); path != "" {
		_ = os.WriteFile(path, []byte(strconv.FormatInt(notePeak(), 10)), 0o644)
	}
}

// TestShrinkCutByTheBudgetKeepsMemoryFlat: once a run's request budget is
// spent mid-shrink, the shrink ends at once: the run's own peak memory
// stays under 100 MB, and the smallest counterexample found is reported
// "not minimal: budget" with a fail file that holds it. Regression (issue
// 22, item 1): rapid's shrinker went on drawing candidates that sent
// nothing, 40,000–157,000 of them, and the process grew to 1.7 GB; long
// sequences (RAPID_STEPS) make each candidate, and the shrinker's memory
// of it, large.
func TestShrinkCutByTheBudgetKeepsMemoryFlat(t *testing.T) {
	t.Parallel() // it mostly waits on real time, beside other such tests
	url, requests := serveRefProvider(t, "replay-new-charge")
	peak := filepath.Join(t.TempDir(), "peak")
	out, failed, dir := runConformance(t, "1", "IDEMCHECK_PROVIDER="+url, "IDEMCHECK_MUTANT=", "IDEMCHECK_TIME_SCALE=0.0667",
		"IDEMCHECK_MAX_REQUESTS=60", "IDEMCHECK_MAX_CHARGES=60", "IDEMCHECK_MAX_DEVIATIONS=1", "RAPID_STEPS=1000", peakFileEnv+"="+peak,
		"IDEMCHECK_SHRINK_SHAPES=off") // rapid's shrink, which the budget cuts: a shape would end it first
	b, err := os.ReadFile(peak)
	require.NoError(t, err, out)
	kb, err := strconv.Atoi(string(b))
	require.NoError(t, err)
	t.Logf("peak memory of the run: %d MB", kb/1024)
	require.Less(t, kb, 100*1024, "the run's peak memory (runtime/metrics), KiB")
	require.True(t, failed, out)
	require.LessOrEqual(t, requests.Load(), int64(60))
	require.Contains(t, out, "not minimal: budget (", out)
	require.NotContains(t, out, "the shrink ends", "rapid's verdict keeps the round's own message")
	md, err := os.ReadFile(reportFile(dir, "url", "failure.md"))
	require.NoError(t, err, out)
	require.Contains(t, string(md), "not minimal: budget")
	// The fail file holds the smallest counterexample's draws, not the
	// last candidate's (which drew nothing).
	kept, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), "testdata", "rapid", "*", "*.fail"))
	require.Len(t, kept, 1, out)
	data, err := os.ReadFile(kept[0])
	require.NoError(t, err)
	require.Greater(t, strings.Count(string(data), "\n0x"), 10, string(data))
	// Replayed with a fresh budget (and the run's RAPID_STEPS, which shapes
	// what the draws mean), it fails again, on the same invariant.
	rel, err := filepath.Rel(filepath.Dir(dir), kept[0])
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^TestConformance$", "-test.v", "-rapid.failfile="+rel, "-rapid.checks=0")
	cmd.Dir = filepath.Dir(dir)
	cmd.Env = append(os.Environ(), "IDEMCHECK_PROVIDER="+url, "IDEMCHECK_MUTANT=", "IDEMCHECK_TIME_SCALE=0.0667", "IDEMCHECK_MAX_DEVIATIONS=1",
		"IDEMCHECK_MAX_REQUESTS=2000", "RAPID_STEPS=1000", "RAPID_SHRINKTIME=1ms", "IDEMCHECK_REPORT_DIR="+t.TempDir(), "GITHUB_STEP_SUMMARY=", "IDEMCHECK_REPRODUCE=0")
	replay, err := cmd.CombinedOutput()
	tail := string(replay[max(0, len(replay)-4000):])
	require.Error(t, err, "the replay passed:\n%s", tail)
	require.Contains(t, string(replay), "replay-consistent violated", tail)
}
