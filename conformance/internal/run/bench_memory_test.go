package run

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkPeakMemory is the peak memory of a long run of the main job:
// one op is a child process of package conformance's test binary (built
// once, before the ops) running TestConformance as go test does (the reference against the embedded provider, its
// summary and index written to a scratch folder) for
// IDEMCHECK_BENCH_SEQUENCES sequences (default 10000) under -rapid.seed
// (default 1). Metrics: MiB-peak-RSS, the child's maximum resident set
// size (getrusage's ru_maxrss, the largest of the ops), and sequences/s,
// the child's rate over its whole life (start-up and summary included).
// Run it with -benchtime=1x: an op takes ~35 s on a quiet 2-core machine.
func BenchmarkPeakMemory(b *testing.B) {
	n := 10000
	if v := os.Getenv("IDEMCHECK_BENCH_SEQUENCES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n <= 0 {
			b.Fatalf("IDEMCHECK_BENCH_SEQUENCES=%q: want a positive number", v)
		}
	}
	// TestConformance lives in package conformance, the public entry over
	// this one: a child of this package's own binary would run no test.
	bin := filepath.Join(b.TempDir(), "conformance.test")
	if out, err := exec.Command("go", "test", "-c", "-o", bin, "github.com/idemcheck/idemcheck/conformance").CombinedOutput(); err != nil {
		b.Fatalf("building package conformance's tests: %v\n%s", err, out)
	}
	var peak int64
	var spent time.Duration
	for b.Loop() {
		dir := b.TempDir()
		cmd := exec.Command(bin, "-test.run=^TestConformance$", "-test.v", "-test.count=1", "-test.timeout=60m",
			"-rapid.checks="+strconv.Itoa(n), "-rapid.seed="+seedOr("1"))
		cmd.Dir = dir // rapid's fail files, were it to fail, land here
		cmd.Env = append(os.Environ(), "IDEMCHECK_PROVIDER=embedded", "IDEMCHECK_PROVIDER_STORE=memory",
			"IDEMCHECK_CLIENT_STORE=memory", "IDEMCHECK_MUTANT=", "IDEMCHECK_REPORT_DIR="+dir,
			"GITHUB_STEP_SUMMARY=", "IDEMCHECK_REPRODUCE=0")
		start := time.Now()
		out, err := cmd.CombinedOutput()
		spent += time.Since(start)
		if err != nil {
			b.Fatalf("the main job's child process: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), "idemcheck: "+strconv.Itoa(n)+" sequences") {
			b.Fatalf("the child did not run %d sequences:\n%s", n, out)
		}
		ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		if !ok {
			b.Fatal("no resource usage for the child process on this system")
		}
		peak = max(peak, int64(ru.Maxrss)) // KiB on Linux
	}
	b.ReportMetric(float64(peak)/1024, "MiB-peak-RSS")
	b.ReportMetric(float64(n)*float64(b.N)/spent.Seconds(), "sequences/s")
}
