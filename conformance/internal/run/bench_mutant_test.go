package run

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/sut/mutants"
)

// BenchmarkMutantDetect is how fast the main job finds each planted bug
// that runs in memory (the pg- and redis- mutants need a real store and
// are left out): a sub-benchmark per mutant, whose op i runs the main job
// against it under rapid seed i+1 until rapid has found and shrunk a
// failure (-benchtime=10x: the 10 seeds 1–10; ns/op is the mean per seed). The main job's own
// settings (-rapid.steps, default 30), at most benchMutantChecks
// sequences each, no fail file written. IDEMCHECK_BENCH_MUTANTS, a
// comma-separated list of names, selects mutants; empty: all.
//
// Metrics, medians over the op's seeds: checks-to-detect (sequences until
// the first failing one, that one included), s-to-detect (wall seconds from
// the start of rapid.Check to the end of that sequence), s-to-shrink (from
// there to rapid's end: its reproduction and shrinking), steps-shrunk (the
// shrunk counterexample's steps); missed-seeds is how many seeds found
// nothing in benchMutantChecks sequences (their time counts as detect time).
func BenchmarkMutantDetect(b *testing.B) {
	for _, m := range benchMutants(b) {
		b.Run(m.Name, func(b *testing.B) { benchMutant(b, m) })
	}
}

// benchMutantChecks bounds the sequences of one seed: a mutant the main
// job (100 sequences by default) needs more for is already a finding.
const benchMutantChecks = 1000

// benchMutants are the mutants BenchmarkMutantDetect runs.
func benchMutants(b *testing.B) []mutants.Mutant {
	var want map[string]bool
	if v := strings.TrimSpace(os.Getenv("IDEMCHECK_BENCH_MUTANTS")); v != "" {
		want = map[string]bool{}
		for _, name := range strings.Split(v, ",") {
			if _, err := mutants.Lookup(strings.TrimSpace(name)); err != nil {
				b.Fatal(err)
			}
			want[strings.TrimSpace(name)] = true
		}
	}
	var out []mutants.Mutant
	for _, m := range mutants.All() {
		if inMemory(m) && (want == nil || want[m.Name]) {
			out = append(out, m)
		}
	}
	return out
}

// detection is what one seed of a mutant showed.
type detection struct {
	found          bool
	checks, steps  int
	detect, shrink time.Duration
}

func benchMutant(b *testing.B, m mutants.Mutant) {
	var ds []detection
	seed := 0
	for b.Loop() {
		seed++
		ds = append(ds, detectMutant(b, m, seed))
	}
	missed := 0
	var checks, steps, detect, shrink []float64
	for _, d := range ds {
		if !d.found {
			missed++
		}
		checks = append(checks, float64(d.checks))
		steps = append(steps, float64(d.steps))
		detect = append(detect, d.detect.Seconds())
		shrink = append(shrink, d.shrink.Seconds())
	}
	b.ReportMetric(median(checks), "checks-to-detect")
	b.ReportMetric(median(detect), "s-to-detect")
	b.ReportMetric(median(shrink), "s-to-shrink")
	b.ReportMetric(median(steps), "steps-shrunk")
	b.ReportMetric(float64(missed), "missed-seeds")
}

// detectMutant runs the main job against m under seed until rapid ends.
func detectMutant(b *testing.B, m mutants.Mutant, seed int) detection {
	withRapid(b, map[string]string{
		"rapid.checks": strconv.Itoa(benchMutantChecks), "rapid.seed": strconv.Itoa(seed), "rapid.nofailfile": "true",
	})
	// A sequence runs in a bubble, whose clock is virtual: each search
	// sequence's end is stamped in real time outside it. The failing one is
	// the last (rapid's reproduction and shrinking do not count).
	ended := make(chan struct{}, benchMutantChecks)
	var stamps []time.Time
	stamped := make(chan struct{})
	go func() {
		defer close(stamped)
		for range ended {
			stamps = append(stamps, time.Now())
		}
	}()
	var (
		d          detection
		start, end time.Time
	)
	// The run fails (that is the point): its output is not wanted.
	_, _ = inTest(b, b.Name(), func(t *testing.T) {
		r := benchRun(t, Config{Mutant: m.Name, OnSequence: func() { ended <- struct{}{} }})
		start = time.Now()
		defer func() { // rapid.Check ends a failing test with FailNow
			end = time.Now()
			r.mu.Lock()
			defer r.mu.Unlock()
			d.checks, d.found = r.round.calls, r.round.found != nil
			if d.found {
				d.steps = len(r.round.smallest.History.Steps)
			}
		}()
		r.checkAll(t)
	})
	close(ended)
	<-stamped
	d.detect = end.Sub(start)
	if d.found && len(stamps) > 0 {
		found := stamps[len(stamps)-1]
		d.detect, d.shrink = found.Sub(start), end.Sub(found)
	}
	return d
}

// median is the median of xs (the mean of the middle two for an even
// count); 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}
