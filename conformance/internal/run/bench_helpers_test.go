package run

import (
	"flag"
	"os"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/conformance/internal/machine"
	"github.com/idemcheck/idemcheck/sut/mutants"
	"pgregory.net/rapid"
)

// The benchmarks of issue 15 (make bench, docs/BENCHMARKS.md) live in the
// bench_*_test.go files of this package: they reach the property's own
// runState, so that a benchmark runs exactly what TestConformance runs
// (Run's rapid.Check of runState.Property) without its report writing.

// inTest runs f under a *testing.T of its own and reports whether it
// passed. rapid.SyncTest (testing/synctest.Test) needs a *testing.T, which
// a benchmark does not have; testing.RunTests, the entry go test itself
// uses, gives one. Its output (a failing mutant's counterexample, or -v's
// "=== RUN" lines, which would break the benchmark's result line) goes to a
// scratch file; out is what it printed.
//
// RunTests applies -test.run and -test.skip through the match function: it
// matches every name here, so a -skip on the command line would skip f (do
// not pass one to the benchmarks). -count runs the test that many times:
// only the first run calls f.
func inTest(b *testing.B, name string, f func(t *testing.T)) (passed bool, out string) {
	b.Helper()
	scratch, err := os.CreateTemp(b.TempDir(), "inner-test-*.txt")
	if err != nil {
		b.Fatal(err)
	}
	defer scratch.Close()
	stdout := os.Stdout
	os.Stdout = scratch
	ran := false
	passed = testing.RunTests(func(string, string) (bool, error) { return true, nil }, []testing.InternalTest{{
		Name: name,
		F: func(t *testing.T) {
			if !ran {
				ran = true
				f(t)
			}
		},
	}})
	os.Stdout = stdout
	raw, _ := os.ReadFile(scratch.Name())
	return passed, string(raw)
}

// mustPass is inTest for work that must pass: the benchmark fails with the
// inner test's output otherwise.
func mustPass(b *testing.B, name string, f func(t *testing.T)) {
	b.Helper()
	if ok, out := inTest(b, name, f); !ok {
		b.Fatalf("%s failed:\n%s", name, out)
	}
}

// benchRun is the runState of one run of the main job against the embedded
// provider in memory, with mutant name planted ("" for the reference), as
// run builds it for TestConformance (with cfg's defaults), but writing no
// report or summary. A mutant that needs PostgreSQL or Redis is refused.
func benchRun(t *testing.T, cfg Config) *runState {
	t.Helper()
	cfg.Provider, cfg.ProviderStore, cfg.ReportDir = machine.ProviderEmbedded, machine.StoreMemory, t.TempDir()
	cfg, err := cfg.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(raiseGC()) // as run does
	stats := newStats(cfg)
	stats.judging(cfg)
	r := &runState{cfg: cfg, test: t.Name(), stats: stats, started: time.Now(), ack: map[string]bool{}}
	if cfg.Mutant != "" {
		m, err := mutants.Lookup(cfg.Mutant)
		if err != nil {
			t.Fatal(err)
		}
		if !inMemory(m) {
			t.Fatalf("mutant %s needs a real store; the benchmarks run in memory", m.Name)
		}
		r.mutant = &m
	}
	r.cfg.Config = r.cfg.WithNeeds(r.mutant)
	return r
}

// inMemory reports whether mutant m runs on the embedded provider in
// memory with the in-memory attempt store (virtual time), and the
// property meets it (not a requirement-only mutant).
func inMemory(m mutants.Mutant) bool {
	return m.RedisStore == nil && m.ClientStore == "" && m.Invariant != ""
}

// exchanges is how many wire exchanges the run's counted sequences made.
func (r *runState) exchanges() int {
	r.stats.mu.Lock()
	defer r.stats.mu.Unlock()
	return r.stats.exchanges
}

// withRapid sets rapid's flags (name → value, e.g. "rapid.checks" → "100")
// for the rest of the benchmark, restoring them when it ends. rapid reads
// its flags when a check starts.
func withRapid(b testing.TB, set map[string]string) {
	b.Helper()
	for name, v := range set {
		f := flag.Lookup(name)
		if f == nil {
			b.Fatalf("no flag %s", name)
		}
		old := f.Value.String()
		if err := f.Value.Set(v); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = f.Value.Set(old) })
	}
}

// seedOr is the -rapid.seed the command line gave, or def when it gave
// none (0: rapid would draw one at random, and a benchmark's sequences
// would differ from run to run).
func seedOr(def string) string {
	if f := flag.Lookup("rapid.seed"); f != nil && f.Value.String() != "0" {
		return f.Value.String()
	}
	return def
}

// checkAll runs rapid over r's property under t, as run does.
func (r *runState) checkAll(t *testing.T) { rapid.Check(t, r.Property()) }
