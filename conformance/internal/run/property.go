package run

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/conformance/internal/machine"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/backend"
	"github.com/idemcheck/idemcheck/sut/mutants"
	"pgregory.net/rapid"
)

// Property returns the conformance property for the run: each check
// draws a sequence of shopper and operator actions, each with the fault
// schedule of its own requests, runs them in a virtual-time bubble
// (rapid.SyncTest) against the configured client and provider, and checks
// the invariants after every step.
func (r *runState) Property() func(*rapid.T) {
	if r.cfg.Real() {
		return r.realTime
	}
	return func(t *rapid.T) {
		r.watched(t, func(t *rapid.T, p *machine.Pulse) { // a stall ends the run (stall.go)
			m := r.bubbleMachine(t, r.mutant, r.beginCheck(), p)
			t.Repeat(m.Actions())
			m.Finish()
			if p.Abandoned() {
				return // the run ended it as stalled: no verdict of its own
			}
			r.endCheck(m, nil) // a bubble's shrink is never cut: no budget
			m.Conclude(t)
		})
	}
}

// bubbleMachine is the machine of one check in its virtual-time bubble,
// over a new world with mutant's bugs, for phase ph, beating p; it drains the world
// when the check ends (machine.Machine.Drain).
func (r *runState) bubbleMachine(t *rapid.T, mutant *mutants.Mutant, ph machine.Phase, p *machine.Pulse) *machine.Machine {
	w, err := machine.NewWorld(r.cfg.Config, mutant)
	if err != nil {
		t.Fatal(err)
	}
	c := r.check(ph)
	c.Pulse = p
	m := machine.New(w, c)
	t.Cleanup(m.Drain)
	return m
}

// realTime is one check against a provider in real time (WireMock): no
// bubble; every step waits for what it started, so nothing is in flight
// between steps, and the provider is reset for the next check. Once a
// round's shrink was cut, a check runs nothing and fails at once
// (shrinkEnd), so that rapid ends the shrink: from the same line as a
// sequence's failure, since rapid compares where a check failed.
func (r *runState) realTime(t *rapid.T) {
	if r.replayCheck(t) || r.shapeCheck(t) {
		return // a log replay's (logreplay.go), a shape's (shapes.go)
	}
	ph := r.beginCheck()
	if ph == machine.PhaseSkip || ph == machine.PhaseSearch && r.stoppedWhy() != "" {
		return // judged in an earlier round, or the search budget is spent
	}
	if ph == machine.PhaseShrink {
		r.tryShapes() // once, before rapid's first candidate
	}
	var m *machine.Machine
	if v := r.endOfShrink(ph); v != nil {
		m = machine.Ended(r.check(ph), v)
	} else if m = r.sequence(t, ph); m.Stopped() != "" {
		if v := r.endOfShrink(ph); v != nil {
			m = machine.Ended(r.check(ph), v) // cut mid-sequence: it ends the shrink too
		}
	}
	m.Conclude(t)
}

// sequence runs one drawn sequence of phase ph in real time and takes in
// its outcome (endCheck).
func (r *runState) sequence(t *rapid.T, ph machine.Phase) *machine.Machine {
	w, err := machine.NewWorld(r.cfg.Config, r.mutant)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := w.Provider().(io.Closer); ok {
		t.Cleanup(func() { _ = c.Close() }) // a sequence's Redis keys
	}
	defer w.Close()
	m := machine.New(w, r.check(ph))
	actions, at := failAt(m, m.Actions())
	t.Repeat(actions)
	m.Finish()
	var bits []uint64
	if f, _ := m.Failed(); f != nil {
		bits = drawnBits(t)
	}
	r.endCheck(m, bits)
	if bits != nil && ph == machine.PhaseShrink {
		r.shapesOfReproduction(bits, elements(t), at())
	}
	return m
}

// check is what the machine of a check for phase ph is told: the
// categories found so far, the cap of the deviation being shrunk,
// the report its failure names, where to note why the run stopped.
func (r *runState) check(ph machine.Phase) machine.Check {
	r.mu.Lock()
	c := r.round.cap
	r.mu.Unlock()
	return machine.Check{Phase: ph, Ack: r.acknowledged(), Cap: c, Stop: &r.stop,
		Report: "\nreport: " + fromRoot(r.reportBase()+".md") + r.envHint()}
}

// runState is shared by every check of one Run: configuration, the last
// failure (for the report) and the coverage statistics.
type runState struct {
	cfg    Config
	mutant *mutants.Mutant
	test   string
	stats  *Stats
	last   lastFailure
	// started is when the run began: only a fail file rapid wrote since
	// then belongs to this failure.
	started time.Time
	// stop is why the run stopped without a verdict (a remote run's
	// budget), noted by its sequences.
	stop machine.Stop

	// lane is the run's lane when several run at once (concurrent.go).
	lane *lane

	mu    sync.Mutex // guards round, done, ack, stalled, undoNoFailFile, replay, shape, roundT
	round round      // the rapid.Check under way (catalogue.go)
	done  int        // search checks that passed, over every round
	ack   map[string]bool
	// stalled is the failure of a check the run gave up waiting for
	// (stall.go), "" while none; undoNoFailFile puts back the
	// -rapid.nofailfile it set (noFailFile), nil when it set none.
	stalled        string
	undoNoFailFile func()
	// replay is the log replay under way (logreplay.go), nil while none.
	replay *logReplayState
	// shape is the shape being tried (shapes.go), nil while none; roundT
	// is the test the round under way runs under.
	shape  *shapeState
	roundT *testing.T
}

// noteStopped records that the run stopped early, and why.
func (r *runState) noteStopped(why string) { r.stop.Note(why) }

// stoppedWhy is why the run stopped early, "" if it did not.
func (r *runState) stoppedWhy() string { return r.stop.Why() }

// Run checks the conformance property under t with rapid (rapid's flags
// apply: -rapid.checks, -rapid.seed, -rapid.failfile). When it fails, the
// shrunk counterexample is written as a Markdown and a JSON report under
// cfg.ReportDir, and the failure names the report and the replay command.
// When a remote run's budget ran out first, t is skipped with an
// INCONCLUSIVE reason. It returns the run's statistics, never nil: a run
// refused before it started says why in each invariant's result.
//
// Against WireMock or a URL the property runs as the subtest "wiremock" or
// "url-<hash>" of t (the first 8 hex digits of the SHA-256 of the URL without
// its credentials), and
// with the provider on Redis as "redis", so that rapid's fail files, which
// every later run of a test replays first, stay apart from the embedded
// provider's and each provider's from another's. Against a URL it keeps
// searching after a violation: every distinct deviation is reported, each
// with its own counterexample (catalogue.go); a deviation cfg.Baseline
// lists is KNOWN and does not fail t. With Config.Parallel above 1
// (IDEMCHECK_PARALLEL) the embedded provider's property runs as the
// subtests p0, p1, … of that test, at once, with one summary for all
// (parallel.go); Config.Shard (IDEMCHECK_SHARD) picks its seeds (shard.go).
// Against a URL, Config.Concurrency (IDEMCHECK_CONCURRENCY) sequences are
// in flight at once, sharing the budgets and the catalogue (concurrent.go).
func Run(t *testing.T, cfg Config) *Stats {
	t.Helper()
	kind := ProviderTag(cfg.Provider)
	if kind == "" && cfg.ProviderStore == machine.StoreRedis {
		kind = "redis"
	}
	stats := newStats(cfg) // never nil: a refused subtest's say why nothing was judged
	if kind == "" {
		return runOrSkip(t, cfg, stats)
	}
	t.Run(kind, func(t *testing.T) { runOrSkip(t, cfg, stats) })
	return stats
}

// runOrSkip is run, filling stats, with a stopped run skipped as
// INCONCLUSIVE.
func runOrSkip(t *testing.T, cfg Config, stats *Stats) *Stats {
	t.Helper()
	stats = run(t, cfg, stats)
	if why := stats.Stopped(); why != "" && !t.Failed() {
		t.Skipf("INCONCLUSIVE: %s after %d complete sequences%s", why, stats.Sequences(), stoppedAdvice(why, "; ", "for more"))
	}
	return stats
}

// stoppedAdvice is what to do about a run that stopped early for why,
// after sep: more budget when a budget is what ran out ("raise
// IDEMCHECK_MAX_… " and what for); nothing when the run was interrupted,
// the provider answered outside its dialect or stayed unavailable, where
// more budget changes nothing and why says what happened.
func stoppedAdvice(why, sep, forWhat string) string {
	if !strings.Contains(why, "budget") {
		return ""
	}
	return sep + "raise IDEMCHECK_MAX_REQUESTS, IDEMCHECK_MAX_CHARGES or IDEMCHECK_MAX_DURATION " + forWhat
}

// runStats runs the property as the subtest name of t (name-<tag> against
// WireMock or a URL, ProviderTag), like Run, and
// returns its statistics and whether it passed — also when it failed or
// its budget ran out (then Stats.Stopped says why; the subtest is not
// skipped) — for a caller that reports the verdicts itself (a
// certification page).
func runStats(t *testing.T, name string, cfg Config) (stats *Stats, passed bool) {
	t.Helper()
	stats = newStats(cfg)
	if tag := ProviderTag(cfg.Provider); tag != "" {
		name += "-" + tag
	}
	passed = t.Run(name, func(t *testing.T) { run(t, cfg, stats) })
	return stats, passed
}

// run is Run without the skip, filling stats (a new one when nil): the
// caller holds them even when t fails and the call never returns.
func run(t *testing.T, cfg Config, stats *Stats) *Stats {
	t.Helper()
	if stats == nil {
		stats = newStats(cfg)
	}
	cfg, err := cfg.WithDefaults()
	if err != nil {
		stats.refuse(t, err)
	}
	if cfg.IsRemote() {
		if cfg.Remote, err = cfg.RemoteProvider(); err != nil {
			stats.refuse(t, err) // a live-looking key is refused here, before any request
		}
		if err := backend.Preflight(cfg.Remote); err != nil {
			// Every invariant says why it was not judged, not "never evaluated".
			stats.notStart("the property's preflight failed, nothing else was sent: " + strings.TrimPrefix(err.Error(), "idemcheck: "))
			t.Fatal(err) // before rapid: not a counterexample to shrink and keep
		}
	}
	if cfg.OnRedis() {
		if _, err := backend.RedisClient(cfg.RedisURL); err != nil {
			stats.refuse(t, err) // before rapid, naming IDEMCHECK_REDIS_URL
		}
	}
	t.Cleanup(raiseGC())
	stats.judging(cfg)
	r := &runState{cfg: cfg, test: t.Name(), stats: stats, started: time.Now(), ack: map[string]bool{}}
	stats.setFolder(cfg.ReportDir, r.started, r.test)
	if cfg.OnStart != nil {
		cfg.OnStart(stats)
	}
	if cfg.Mutant != "" {
		m, err := mutants.Lookup(cfg.Mutant)
		if err != nil {
			stats.refuse(t, err)
		}
		r.mutant = &m
		if err := cfg.CheckStoreMutant(&m); err != nil {
			stats.refuse(t, err)
		}
		if cfg.Provider != machine.ProviderEmbedded && m.Side == "provider" && (cfg.Provider != machine.ProviderWireMock || m.WireMock == nil) {
			stats.refuse(t, fmt.Errorf("mutant %s plants a bug in the embedded provider; IDEMCHECK_PROVIDER=%s tests another provider (use a client mutant, or the embedded provider; cmd/refprovider -mutant serves a provider mutant)", m.Name, reports.RedactURL(cfg.Provider)))
		}
	}
	dropStore := func() {}
	if r.cfg.Config, dropStore, err = r.cfg.WithNeeds(r.mutant).PrepareStore(t.Context()); err != nil {
		stats.refuse(t, err) // before rapid: a store that does not answer is not a counterexample
	}
	t.Cleanup(dropStore)
	if cfg.IsRemote() {
		// Every deviation in one run, each reported as it is found.
		if base := rapidSeed(); base != 0 && !cfg.Shard.whole() {
			defer setRapidFlags(t, 0, cfg.Shard.streamSeed(base, 0, 1))() // this shard's seeds (shard.go)
		}
		r.searchAll(t) // Concurrency lanes at once (concurrent.go)
		r.stats.mu.Lock()
		r.stats.stopped = r.stoppedWhy()
		r.stats.mu.Unlock()
		r.writeCatalogue(t)
		return r.stats
	}
	n := r.cfg.parallelism()
	if r.cfg.inProcess() {
		defer fewerProcs(n)() // one processor per property while they run (procs.go), not until the test ends
	}
	t.Cleanup(r.keepFailFiles) // after the cleanup below: rapid has kept its fail file or not
	t.Cleanup(func() {
		if t.Failed() {
			if n == 1 { // a parallel run's failing properties wrote their own reports (runParallel)
				r.failed(t)
			}
			return // the report says what failed; the statistics are in the passing runs' summaries
		}
		r.writeSummary(t)
	})
	if n > 1 {
		r.runParallel(t, n) // IDEMCHECK_PARALLEL: n properties at once, one summary (parallel.go)
	} else {
		r.checkStream(t, 0, 1, -1, rapidSeed(), r.Property()) // rapid.Check, from this shard's seed
	}
	r.stats.mu.Lock()
	r.stats.stopped = r.stoppedWhy()
	r.stats.mu.Unlock()
	return r.stats
}
