package run

import (
	"flag"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// Every core (IDEMCHECK_PARALLEL): a run of the embedded provider checks
// Config.Parallel independent rapid properties at once, as the subtests
// p0, p1, … of its test, started from concurrent t.Run calls (not
// t.Parallel: Run returns, with the statistics, once every one ended).
// Each property has its own runState (its failure, its report, its fail
// file under testdata/rapid/<Test>_p<i>/, which later runs of that
// subtest replay first) and all share the run's Stats, so the run writes
// ONE summary and ONE index entry, under the parent test's name, when
// every property passed. A failing property is reported as an unparallel
// run's failure is, its replay line naming its subtest and its fail file.
//
// Checks: property p of N runs ⌊C/N⌋ of -rapid.checks=C, the first C mod N
// one more, so a run checks C sequences whatever N. Seeds: property p
// starts at Shard.streamSeed(-rapid.seed, p, N); without -rapid.seed each
// property draws a random base seed, as rapid does.
//
// Only the embedded provider with both stores in memory runs in parallel:
// its worlds share nothing but the statistics. WireMock is one server whose
// stubs and journal every sequence resets, the PostgreSQL client store one
// schema emptied before each sequence, a URL one set of budgets and
// a catalogue of deviations in rounds; the provider on Redis and a client
// under test over HTTP run in real time, where a second property mostly
// waits. A mutant run keeps one property too unless IDEMCHECK_PARALLEL
// asks for more, so its checks-to-detect (the mutant matrix) and its single
// counterexample stay as they were. A
// replay (-rapid.failfile) is one property: the fail file is replayed
// once, under the test's own name.

// rapidFlagsMu guards rapid's -rapid.checks and -rapid.seed while one
// property of a parallel run holds them set to its own values: from
// before its rapid.Check until rapid has read them (its first check), or
// until rapid.Check returns when it runs none.
var rapidFlagsMu sync.Mutex

// parallelism is how many properties cfg's run checks at once.
func (c Config) parallelism() int {
	if c.OverHTTP() && !c.ConcurrencyAuto && rapidFlag("rapid.failfile") == "" {
		return min(max(c.Concurrency, 1), MaxConcurrency) // a service per sequence: in flight at once (concurrent.go)
	}
	if c.Parallel <= 1 || !c.inProcess() || c.Mutant != "" && c.ParallelAuto || rapidFlag("rapid.failfile") != "" {
		return 1
	}
	return c.Parallel
}

// rapidFlag is the value of one of rapid's flags, "" when it is not
// registered.
func rapidFlag(name string) string {
	if f := flag.Lookup(name); f != nil {
		return f.Value.String()
	}
	return ""
}

// rapidSeed is -rapid.seed, 0 (a random seed per property) when unset.
func rapidSeed() uint64 {
	n, _ := strconv.ParseUint(rapidFlag("rapid.seed"), 10, 64)
	return n
}

// share is property p's share of checks among n.
func share(checks, p, n int) int {
	s := checks / n
	if p < checks%n {
		s++
	}
	return s
}

// checkStream runs prop under t with rapid, as property p of n: with
// checks checks (-1: -rapid.checks as it is) from its own seed, derived
// from base (-rapid.seed, read before any property starts: a sibling
// sets the flag to its own seed while rapid reads it).
func (r *runState) checkStream(t *testing.T, p, n, checks int, base uint64, prop func(*rapid.T)) {
	t.Helper()
	seed := r.cfg.Shard.streamSeed(base, p, n)
	if (base == 0 || seed == base) && checks < 0 {
		rapid.Check(t, prop) // nothing to set
		return
	}
	if base == 0 {
		seed = 0 // rapid draws one
	} else {
		t.Logf("idemcheck: property %d of %d%s starts at seed %d (-rapid.seed=%d)", p, n, shardNote(r.cfg.Shard), seed, base)
	}
	checkWithFlags(t, checks, seed, prop)
}

// checkWithFlags is rapid.Check of prop under t with -rapid.checks set to
// checks (unless negative) and -rapid.seed to seed (unless 0); see
// checkUnderFlags.
func checkWithFlags(t rapid.TB, checks int, seed uint64, prop func(*rapid.T)) {
	t.Helper()
	set := map[string]string{}
	if checks >= 0 {
		set["rapid.checks"] = strconv.Itoa(checks)
	}
	if seed != 0 {
		set["rapid.seed"] = strconv.FormatUint(seed, 10)
	}
	checkUnderFlags(t, set, prop)
}

// checkUnderFlags is rapid.Check of prop under t with each named rapid
// flag set to its value. rapid reads -rapid.checks, -rapid.seed and
// -rapid.failfile when rapid.Check starts; they are set under
// rapidFlagsMu, and put back once rapid has read them (its first check,
// or its end when it runs none), so that rounds in flight at once
// (concurrent.go, parallel properties) never start under another's
// flags. (-rapid.nofailfile is read when a check ends: it is not one to
// set here.)
func checkUnderFlags(t rapid.TB, set map[string]string, prop func(*rapid.T)) {
	t.Helper()
	rapidFlagsMu.Lock()
	var once sync.Once
	var undo []func()
	release := func() {
		once.Do(func() {
			for _, u := range undo {
				u()
			}
			rapidFlagsMu.Unlock()
		})
	}
	defer release()
	for name, v := range set {
		f := flag.Lookup(name)
		if f == nil {
			continue
		}
		old := f.Value.String()
		if f.Value.Set(v) == nil {
			undo = append(undo, func() { _ = f.Value.Set(old) })
		}
	}
	rapid.Check(t, func(rt *rapid.T) {
		release() // rapid has read its flags
		prop(rt)
	})
}

func shardNote(s Shard) string {
	if s.whole() {
		return ""
	}
	return " on shard " + s.String()
}

// runParallel checks n properties of r's run as the subtests p0 … p<n-1>
// of t, at once, and returns when all have ended. Their statistics go to
// r.stats; the caller writes the summary when t has not failed.
func (r *runState) runParallel(t *testing.T, n int) {
	t.Helper()
	checks, err := strconv.Atoi(rapidFlag("rapid.checks"))
	if err != nil {
		checks = 100 // rapid's default
	}
	if checks > 0 && n > checks {
		n = checks // a property without a check is only its cost (IDEMCHECK_PARALLEL=100000 with 4 checks took 1.2 GB)
	}
	base := rapidSeed()
	t.Logf("idemcheck: %d properties at once (%s=%d), %d checks in all", n, r.cfg.parallelVar(), n, checks)
	var wg sync.WaitGroup
	for p := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run(fmt.Sprintf("p%d", p), func(t *testing.T) {
				c := &runState{cfg: r.cfg, mutant: r.mutant, test: t.Name(), stats: r.stats, started: time.Now(), ack: map[string]bool{}}
				c.cfg.Parallel = n
				t.Cleanup(func() {
					if t.Failed() {
						c.failed(t)
					}
				})
				c.checkStream(t, p, n, share(checks, p, n), base, c.Property())
			})
		}()
	}
	wg.Wait()
}

// failed records a failing run's violation in its statistics and writes
// its report.
func (r *runState) failed(t *testing.T) {
	if f, ok := r.last.get(); ok {
		r.stats.mu.Lock()
		r.stats.violated, r.stats.violation = f.Invariant, f.Message
		r.stats.mu.Unlock()
	}
	r.writeReport(t)
}
