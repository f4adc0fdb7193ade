package run

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// BenchmarkProperty is the main job as TestConformance runs it: the
// reference client against the embedded provider in virtual time, every
// fault schedule, every safety invariant after every step and the final
// liveness phase, at rapid's -rapid.steps (default 30). One op is one drawn
// sequence (b.N is rapid's -rapid.checks); the rapid seed is -rapid.seed,
// or 1 when it is not given, so every run draws the same sequences.
//
// Metrics: sequences/s and exchanges/s (wire exchanges, each a request of
// the client or of a probe and its answer, or its fault), ns/exchange,
// exchanges/sequence, and allocs/exchange (every heap allocation of the
// run, from runtime.MemStats, divided by its exchanges), and procs (the
// GOMAXPROCS it ran at: as a run does, fewerProcs sets one processor per
// property unless GOMAXPROCS is set, whatever -test.cpu says). make bench
// divides ns/exchange by BenchmarkProviderDirect's (sut/provider): the
// harness's cost over the floor.
func BenchmarkProperty(b *testing.B) { benchProperty(b, "", 1) }

// BenchmarkPropertyParallel is BenchmarkProperty with GOMAXPROCS
// properties at once (IDEMCHECK_PARALLEL's default: every core), b.N
// sequences in all, each property from its own derived seed: make bench
// divides its sequences/s by BenchmarkProperty's, the speedup with every
// core.
func BenchmarkPropertyParallel(b *testing.B) { benchProperty(b, "", runtime.GOMAXPROCS(0)) }

// BenchmarkPropertySteps is BenchmarkProperty at -rapid.steps 30, 100
// and 300: how a sequence's cost grows with its length. A step's check
// reads the whole history so far, so without an incremental checker
// ns/exchange grows with the steps.
func BenchmarkPropertySteps(b *testing.B) {
	for _, steps := range []int{30, 100, 300} {
		b.Run(fmt.Sprintf("steps=%d", steps), func(b *testing.B) { benchProperty(b, strconv.Itoa(steps), 1) })
	}
}

// benchProperty runs b.N sequences of the main job at steps ("" for
// rapid's -rapid.steps), in n properties at once, and reports their rates.
func benchProperty(b *testing.B, steps string, n int) {
	set := map[string]string{"rapid.checks": strconv.Itoa(b.N), "rapid.seed": seedOr("1")}
	if steps != "" {
		set["rapid.steps"] = steps
	}
	withRapid(b, set)
	b.ReportAllocs()
	var (
		r        *runState
		before   runtime.MemStats
		after    runtime.MemStats
		start    time.Time
		duration time.Duration
		procs    int
	)
	b.ResetTimer()
	mustPass(b, b.Name(), func(t *testing.T) {
		r = benchRun(t, Config{})
		t.Cleanup(fewerProcs(n)) // as run does
		procs = runtime.GOMAXPROCS(0)
		runtime.ReadMemStats(&before)
		start = time.Now()
		if n > 1 {
			r.runParallel(t, n)
		} else {
			r.checkAll(t)
		}
		duration = time.Since(start)
		runtime.ReadMemStats(&after)
	})
	b.StopTimer()
	seqs, ex := r.stats.Sequences(), r.exchanges()
	if seqs == 0 || ex == 0 {
		b.Fatalf("the run counted %d sequences and %d exchanges", seqs, ex)
	}
	sec := duration.Seconds()
	b.ReportMetric(float64(seqs)/sec, "sequences/s")
	b.ReportMetric(float64(ex)/sec, "exchanges/s")
	b.ReportMetric(float64(duration.Nanoseconds())/float64(ex), "ns/exchange")
	b.ReportMetric(float64(ex)/float64(seqs), "exchanges/sequence")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(ex), "allocs/exchange")
	if n > 1 {
		b.ReportMetric(float64(n), "properties")
	}
	b.ReportMetric(float64(procs), "procs")
}
