package conformance

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/backend"
	"github.com/idemcheck/idemcheck/sut/mutants"
	"github.com/idemcheck/idemcheck/sut/remote"
	"pgregory.net/rapid"
)

// machine is one drawn sequence: a world plus the run it reports to.
type machine struct {
	run   *runState
	w     *world
	steps int
	// failed is the first violation found; once set, the remaining drawn
	// actions do nothing and the check fails in conclude.
	failed *ViolationError
	// broken is a failure of the harness's own machinery (WireMock's admin
	// API did not answer, its journal disagrees with the client's record);
	// it stops the sequence like a violation and fails the check as itself.
	broken error
	// stopped says why the sequence stopped early without a verdict: a
	// remote run's budget ran out. The check then passes vacuously and Run
	// reports the run INCONCLUSIVE.
	stopped string
	// phase is what the check is for (search, skipped, shrink); ack the
	// categories the run's catalogue already found, which do not fail it.
	phase phase
	ack   map[string]bool
	// evals counts each invariant's evaluations; they reach the run's
	// statistics only when the sequence counts (endCheck).
	evals map[string]int
	// known is a violation the run's catalogue already acknowledged: it
	// ends the sequence, which then passes.
	known *ViolationError
	// failedWorld is the world that showed failed (or known).
	failedWorld World
}

// newMachine is the machine of one check.
func (r *runState) newMachine(w *world, ph phase) *machine {
	return &machine{run: r, w: w, phase: ph, ack: r.acknowledged(), evals: map[string]int{}}
}

// step records the start of a step that sends nothing of its own.
func (m *machine) step(action, args string) {
	m.stepWith(action, args, nil)
}

// drawFaults draws the fault schedule of the step about to run: what
// happens to its n-th request. A schedule per step, rather than one for the
// whole sequence, keeps each fault with the step it hits, so that shrinking
// can drop a step together with its faults.
// In real time their durations are scaled like the client's timeouts
// (Config.TimeScale), so the report shows the delays that really happened.
func (m *machine) drawFaults(t *rapid.T) []faults.Fault {
	gen := faults.ScheduleGen
	switch {
	case m.run.cfg.onRedis():
		gen = faults.StoreScheduleGen // the provider's own store fails too
	case m.w.real:
		gen = faults.PlainScheduleGen // no hang-up or outage in real time (faults/gen.go)
	}
	fs := gen(m.run.cfg.MaxSchedule).Draw(t, "faults")
	if m.w.real {
		for i := range fs {
			fs[i].Delay = m.w.scale(fs[i].Delay)
		}
	}
	return fs
}

// stepWith records the start of a step whose requests get fs.
func (m *machine) stepWith(action, args string, fs []faults.Fault) {
	m.w.clock.Settle()
	m.steps++
	if len(fs) > 0 {
		var names []string
		for _, f := range fs {
			names = append(names, f.String())
		}
		m.w.schedules = append(m.w.schedules, fmt.Sprintf("step %d: %s", m.steps, strings.Join(names, ", ")))
		args = strings.TrimPrefix(args+"; faults: "+strings.Join(names, ", "), "; ")
	}
	m.w.faults.Schedule(fs)
	m.w.hist.BeginStep(action, args, m.w.clock.Now())
}

// check runs the safety invariants after a step, judging only what the
// step added (check.Checker; stepVerdict).
func (m *machine) check(*rapid.T) {
	m.evaluateBy(m.safety(), m.stepVerdict)
}

// safety is the safety invariants this run judges: all of them in
// process; against a remote provider, replay-consistent and
// mismatch-rejected judged from its answers alone (invariants_remote.go),
// or left out when a key may expire mid-run; against WireMock, whose
// answers the harness itself programs from the specification
// (sut/wiremock), those two are left out, as they would judge the harness.
func (m *machine) safety() []Invariant {
	switch {
	case !m.w.real || m.w.specJudged || m.w.loopback:
		return m.judged(Safety())
	case m.remoteJudged():
		return m.judged(check.RemoteSafety(Safety(), m.run.cfg.Remote.Profile().ErrorsStored))
	}
	return m.judged(check.WithoutProviderOnly(Safety()))
}

// remoteJudged reports whether this run is against a remote provider whose
// provider-only invariants are judged from its answers (remoteJudged).
func (m *machine) remoteJudged() bool {
	p := m.run.cfg.Remote
	if !m.w.real || !m.run.cfg.isRemote() || p == nil {
		return false
	}
	ok, _ := remoteJudged(p)
	return ok
}

// evaluate runs invs over the whole history (check.Evaluate: the final
// verdict) and keeps the first violation, with the world that showed it,
// for conclude.
func (m *machine) evaluate(invs []Invariant) { m.evaluateBy(invs, evaluate) }

// evaluateBy is evaluate with judge as the verdict over the world.
func (m *machine) evaluateBy(invs []Invariant, judge func(World, []Invariant) *ViolationError) {
	if m.failed != nil || m.known != nil || m.broken != nil {
		return
	}
	m.w.clock.Settle() // a provider commit due now is in the snapshot, or not, every time
	w, err := m.w.snapshot()
	if err != nil {
		m.halt(err)
		return
	}
	for _, inv := range invs {
		m.evals[inv.Name]++
	}
	if v := m.w.contractViolation(); v != nil {
		m.fail(w, v)
	} else if v := judge(w, invs); v != nil {
		m.fail(w, v)
	}
}

func (m *machine) fail(w World, v *ViolationError) {
	if m.ack[v.Category] {
		// Found earlier in the run: the sequence ends here and passes, so
		// what follows from it (two charges after a broken replay) is not
		// taken for a deviation of its own; the search goes on.
		m.known, m.failedWorld = v, w
		return
	}
	m.failed, m.failedWorld = v, w
	m.run.remember(m, w, v)
}

// live wraps an action so that it does nothing once a violation is found:
// every failure is then raised at one place, conclude, whether it showed
// after a step or in the final phase. rapid accepts a shrunk sequence only
// when it fails with the same message at the same place, so this lets a
// failure found mid-sequence shrink into one found at the end.
func (m *machine) live(action func(*rapid.T)) func(*rapid.T) {
	return func(t *rapid.T) {
		if m.failed == nil && m.known == nil && m.broken == nil && m.stopped == "" && !m.outOfBudget() {
			action(t)
		}
	}
}

// outOfBudget stops the sequence when a remote run's budget has no room
// for another step.
func (m *machine) outOfBudget() bool {
	b, ok := m.w.prov.(backend.Budgeted)
	if !ok {
		return false
	}
	out, why := b.Exhausted()
	if !out && m.phase == phaseSearch {
		// The search leaves ShrinkShare of each budget for shrinking.
		var which string
		if out, which = b.SearchExhausted(); out {
			why = fmt.Sprintf("the %s budget is spent (its last %.0f%% is kept for shrinking)", which, backend.ShrinkShare*100)
		}
	}
	if !out && m.phase == phaseShrink {
		if why = m.run.knownShrinkSpent(m.w.prov); why != "" {
			m.stopped = why // ends this shrink attempt only (round.cut), not the run
			return true
		}
	}
	if out {
		m.stopped = why
		m.run.noteStopped(m.stopped)
	}
	return out
}

// halt ends the sequence on an error reading the provider: a spent budget
// stops it without a verdict, as does a provider URL whose own answers
// to the harness's find-by-reference cannot be read (transient, over the
// body cap, malformed); anything else is the harness failing.
func (m *machine) halt(err error) {
	if errors.Is(err, remote.ErrBudget) {
		m.stopped = "a budget is spent"
		if b, ok := m.w.prov.(backend.Budgeted); ok {
			if _, why := b.Exhausted(); why != "" {
				m.stopped = why // as outOfBudget says it
			}
		}
		m.run.noteStopped(m.stopped)
		return
	}
	if errors.Is(err, remote.ErrUnavailable) { // the provider's own 429 / 5xx: not a verdict
		m.stopped = unavailable(err)
		m.run.noteStopped(m.stopped)
		return
	}
	if m.w.real && m.run.cfg.isRemote() { // the preflight passed; now its answers cannot be read
		m.stopped = unreadable(err)
		m.run.noteStopped(m.stopped)
		return
	}
	m.broken = err
}

// finish heals the faults, lets AbandonAfter plus the reconciliation
// interval pass, reconciles, and checks safety and liveness; then pays
// every abandoned order again, which must succeed under a new key.
func (m *machine) finish() {
	if m.failed != nil || m.known != nil || m.broken != nil || m.stopped != "" || m.outOfBudget() {
		return
	}
	w := m.w
	w.faults.Heal()
	healed := len(w.hist.Snapshot().Exchanges)
	// Let in-flight work end, then the attempts age past AbandonAfter.
	w.clock.Advance(w.ccfg.TotalTimeout + w.ccfg.AbandonAfter + w.ccfg.Interval)
	w.reconcile("reconciler (final)")
	w.clock.Advance(w.ccfg.Interval)
	w.reconcile("reconciler (final)")
	if r, ok := w.prov.(backend.Refresher); ok {
		r.Refresh() // the final verdict reads the provider's whole truth
	}
	m.evaluate(m.safety())
	if why := m.unsettled(healed); why != "" && m.failed == nil && m.known == nil && m.broken == nil {
		m.stopped = why // liveness needs a provider that answers once the faults heal
		m.run.noteStopped(why)
		return
	}
	m.evaluate(m.judged(Liveness()))
	m.payAbandonedAgain()
}

// conclude fails the check with the first violation found: its category is
// the failure rapid shrinks by, its full message is logged above it.
func (m *machine) conclude(t *rapid.T) {
	if m.broken != nil {
		t.Fatalf("idemcheck could not judge the run: %v", m.broken)
	}
	if v := m.failed; v != nil {
		t.Log(v.Message)
		t.Fatalf("%s\nreport: %s%s", v.Category, fromRoot(m.run.reportBase()+".md"), m.run.envHint())
	}
}

// drainTime outlasts anything in flight: the longest slow processing
// (20 s), the client's total timeout, and the drop bound (5 min).
const drainTime = time.Hour

// Property returns the conformance property for cfg: each check draws a
// sequence of shopper and operator actions, each with the fault schedule of
// its own requests, runs them
// in a virtual-time bubble (rapid.SyncTest) against the configured client
// and provider, and checks the invariants after every step.
func (r *runState) Property() func(*rapid.T) {
	if r.cfg.Provider == ProviderWireMock || r.cfg.isRemote() || r.cfg.onRedis() || r.cfg.under.overHTTP() {
		return r.realTime
	}
	return func(t *rapid.T) {
		rapid.SyncTest(t, func(t *rapid.T) {
			m := r.bubbleMachine(t, r.mutant, r.beginCheck())
			t.Repeat(m.actions())
			m.finish()
			r.endCheck(m)
			m.conclude(t)
		})
	}
}

// bubbleMachine is the machine of one check in its virtual-time bubble,
// over a new world with mutant's bugs, for phase ph. A bubble's time stops
// when its main goroutine exits, so a check that ends mid-sequence (a
// failure, a benchmark that has what it wanted) first lets the provider's
// in-flight work end, or synctest reports a deadlock.
func (r *runState) bubbleMachine(t *rapid.T, mutant *mutants.Mutant, ph phase) *machine {
	w, err := newWorld(r.cfg, mutant)
	if err != nil {
		t.Fatal(err)
	}
	m := r.newMachine(w, ph)
	t.Cleanup(func() {
		m.w.faults.Heal()
		m.w.clock.Advance(drainTime)
		m.w.drainHung()
	})
	return m
}

// realTime is one check against a provider in real time (WireMock): no
// bubble; every step waits for what it started, so nothing is in flight
// between steps, and the provider is reset for the next check.
func (r *runState) realTime(t *rapid.T) {
	ph := r.beginCheck()
	if ph == phaseSkip || ph == phaseSearch && r.stoppedWhy() != "" {
		return // judged in an earlier round, or the search budget is spent
	}
	w, err := newWorld(r.cfg, r.mutant)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := w.prov.(io.Closer); ok {
		t.Cleanup(func() { _ = c.Close() }) // a sequence's Redis keys
	}
	defer w.close()
	m := r.newMachine(w, ph)
	t.Repeat(m.actions())
	m.finish()
	r.endCheck(m)
	m.conclude(t)
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

	mu      sync.Mutex // guards stopped, round, done, ack
	stopped string     // why a remote run stopped without a verdict, "" if it did not
	round   round      // the rapid.Check under way (catalogue.go)
	done    int        // search checks that passed, over every round
	ack     map[string]bool
}

// noteStopped records that the run stopped early, and why.
func (r *runState) noteStopped(why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped == "" {
		r.stopped = why
	}
}

func (r *runState) stoppedWhy() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stopped
}

// Run checks the conformance property under t with rapid (rapid's flags
// apply: -rapid.checks, -rapid.seed, -rapid.failfile). When it fails, the
// shrunk counterexample is written as a Markdown and a JSON report under
// cfg.ReportDir, and the failure names the report and the replay command.
// When a remote run's budget ran out first, t is skipped with an
// INCONCLUSIVE reason. It returns the run's statistics (nil when the run
// could not start).
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
func Run(t *testing.T, cfg Config) *Stats {
	t.Helper()
	kind := providerTag(cfg.Provider)
	if kind == "" && cfg.ProviderStore == StoreRedis {
		kind = "redis"
	}
	if kind == "" {
		return runOrSkip(t, cfg)
	}
	var stats *Stats
	t.Run(kind, func(t *testing.T) { stats = runOrSkip(t, cfg) })
	return stats
}

func runOrSkip(t *testing.T, cfg Config) *Stats {
	t.Helper()
	stats := run(t, cfg, nil)
	if why := stats.Stopped(); why != "" && !t.Failed() {
		t.Skipf("INCONCLUSIVE: %s after %d complete sequences; raise IDEMCHECK_MAX_REQUESTS / IDEMCHECK_MAX_CHARGES / IDEMCHECK_MAX_DURATION for more", why, stats.Sequences())
	}
	return stats
}

// runStats runs the property as the subtest name of t (name-<tag> against
// WireMock or a URL, providerTag), like Run, and
// returns its statistics and whether it passed — also when it failed or
// its budget ran out (then Stats.Stopped says why; the subtest is not
// skipped) — for a caller that reports the verdicts itself (a
// certification page).
func runStats(t *testing.T, name string, cfg Config) (stats *Stats, passed bool) {
	t.Helper()
	stats = newStats(cfg)
	if tag := providerTag(cfg.Provider); tag != "" {
		name += "-" + tag
	}
	passed = t.Run(name, func(t *testing.T) { run(t, cfg, stats) })
	return stats, passed
}

// run is Run without the skip, filling stats (a new one when nil): the
// caller holds them even when t fails and the call never returns.
func run(t *testing.T, cfg Config, stats *Stats) *Stats {
	t.Helper()
	cfg, err := cfg.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.isRemote() {
		if cfg.Remote, err = cfg.remoteProvider(); err != nil {
			t.Fatal(err) // a live-looking key is refused here, before any request
		}
		if err := backend.Preflight(cfg.Remote); err != nil {
			t.Fatal(err) // before rapid: not a counterexample to shrink and keep
		}
	}
	if cfg.onRedis() {
		if _, err := backend.RedisClient(cfg.RedisURL); err != nil {
			t.Fatal(err) // before rapid, naming IDEMCHECK_REDIS_URL
		}
	}
	if stats == nil {
		stats = newStats(cfg)
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
			t.Fatal(err)
		}
		r.mutant = &m
		if err := cfg.checkStoreMutant(&m); err != nil {
			t.Fatal(err)
		}
		if cfg.Provider != ProviderEmbedded && m.Side == "provider" && (cfg.Provider != ProviderWireMock || m.WireMock == nil) {
			t.Fatalf("mutant %s plants a bug in the embedded provider; IDEMCHECK_PROVIDER=%s tests another provider (use a client mutant, or the embedded provider; cmd/refprovider -mutant serves a provider mutant)", m.Name, reports.RedactURL(cfg.Provider))
		}
	}
	dropStore := func() {}
	if r.cfg, dropStore, err = r.cfg.withNeeds(r.mutant).prepareStore(t.Context()); err != nil {
		t.Fatal(err) // before rapid: a store that does not answer is not a counterexample
	}
	t.Cleanup(dropStore)
	if cfg.isRemote() {
		// Every deviation in one run, each reported as it is found.
		if base := rapidSeed(); base != 0 && !cfg.Shard.whole() {
			defer setRapidFlags(t, 0, cfg.Shard.streamSeed(base, 0, 1))() // this shard's seeds (shard.go)
		}
		r.catalogue(t)
		r.stats.mu.Lock()
		r.stats.stopped = r.stoppedWhy()
		r.stats.mu.Unlock()
		r.writeCatalogue(t)
		return r.stats
	}
	n := r.cfg.parallelism()
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
