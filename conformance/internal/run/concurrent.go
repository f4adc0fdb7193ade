package run

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/idemcheck/idemcheck/conformance/check"
	"pgregory.net/rapid"
)

// Sequences in flight at once (IDEMCHECK_CONCURRENCY, issue 24 item 3).
// Against a URL a sequence mostly waits on the network: at 300 ms per
// answer one takes seconds while the CPU idles. With Config.Concurrency
// N above 1 the catalogue (catalogue.go) runs as N lanes at once, each
// its own rapid property in rounds, as one lane runs alone:
//
//   - Checks and seeds: lane p runs ⌊C/N⌋ of -rapid.checks=C (the first
//     C mod N one more) from the seed base + p·⌊(2⁶⁴−1)/N⌋, base being
//     -rapid.seed (this shard's, shard.go) or, without one, a random base
//     drawn once for the run and logged. Lane 0 is the run one lane would
//     be: the test's own name, its seed, its fail files.
//   - Keys and merchant references: every sequence draws its own
//     (machine's newRemoteKeySource numbers the sequences of the process,
//     remote.Provider.Reference the references of the run), so lanes never
//     share one.
//   - Budgets: every lane sends through the run's one remote.Provider, so
//     one budget Meter counts the requests and creates of all of them
//     under its lock, and refuses the first past a limit, whichever lane
//     sends it; a Retry-After the provider answered one lane holds every
//     lane's next request (Meter.Hold, Wait).
//   - Fail files: lane p's rapid writes and replays its own under
//     testdata/rapid/<test>_c<p>/ (lane 0: <test>/), named in its
//     deviation's replay line; a replay (-rapid.failfile) runs one lane.
//   - One catalogue: a lane that finds a category claims it; the other
//     lanes' later checks take it as acknowledged, as a recorded
//     deviation. A category two lanes found at once is shrunk and recorded
//     by the first to find it; the other's shrink is cut at once
//     (shrinkEnd, takenCut) and its counterexample dropped.
//     Deviations are numbered in the order they are recorded, across
//     lanes; IDEMCHECK_MAX_DEVIATIONS counts them all.
//
// A lane's shrink takes the other lanes' claims as they were when it
// found its violation, so that rapid's reproduction sees what the search
// saw. Which lane finds a deviation first depends on timing: under one
// seed a run at N>1 finds the same deviations, not always from the same
// sequences; each counterexample replays alone from its fail file.
//
// A client service over HTTP (CheckService) runs its N properties at once
// as the embedded provider's IDEMCHECK_PARALLEL does (parallel.go): the
// subtests p0 … p<N-1>, a service and a provider per sequence, the run's
// one deadline (ServiceOptions.MaxDuration) for all.

// ConcurrencyEnv is the variable that sets Config.Concurrency.
const ConcurrencyEnv = "IDEMCHECK_CONCURRENCY"

// DefaultConcurrency is Config.Concurrency's default against a URL: the
// sequences a run keeps in flight at once. Measured against idemcheck
// serve -processing 300ms on the shared 2-core machine (docs/profiles.md,
// "Sequences in flight"): N = 1, 2, 4, 8 drew about 60, 110, 190–260 and
// 520 sequences a minute, sending about 24, 43, 80 and 185 requests a
// second. 4 takes the default 100-check search from about 100 s to about
// 25–30 s; 8 saves some 12 s more but doubles the request rate, past
// what most sandboxes allow (their 429s then hold every sequence, or read
// as the provider's faults). A client service over HTTP keeps 1 unless
// asked (ConcurrencyAuto): its N properties do not share a catalogue, so
// a bug all of them meet is shrunk and reported N times (at N=4 the
// example service's 40 sequences took 8.6 s instead of 18.1 s).
const DefaultConcurrency = 4

// MaxConcurrency bounds Config.Concurrency: each sequence in flight holds
// a world, a client and its connections.
const MaxConcurrency = 64

// concurrencyFromEnv sets c.Concurrency from IDEMCHECK_CONCURRENCY, or
// DefaultConcurrency (ConcurrencyAuto) when it is unset.
func (c *Config) concurrencyFromEnv() error {
	c.Concurrency, c.ConcurrencyAuto = DefaultConcurrency, true
	v := os.Getenv(ConcurrencyEnv)
	if v == "" {
		return nil
	}
	n, err := ParseConcurrency(v)
	if err != nil {
		return err
	}
	c.Concurrency, c.ConcurrencyAuto = n, false
	return nil
}

// ParseConcurrency reads a count of sequences in flight, 1 to
// MaxConcurrency; anything else is an error naming IDEMCHECK_CONCURRENCY.
func ParseConcurrency(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || !digits(v) || n < 1 || n > MaxConcurrency {
		return 0, fmt.Errorf("conformance: %s=%q is not a number of sequences in flight from 1 to %d", ConcurrencyEnv, v, MaxConcurrency)
	}
	return n, nil
}

// concurrency is how many sequences c's run keeps in flight: Concurrency
// against a URL, else 1. A replay of one fail file is one; so is a run
// that checks reproducibility (IDEMCHECK_REPRODUCE), whose child replays
// each take a share of the budget left, which lanes still sending would
// spend beside them. A client service over HTTP is parallelism's. So is
// a URL whose lifecycle hooks are given: a drawn restart or store outage
// hits every request in flight and every lookup of the provider's truth,
// another sequence's included, which would then fail or stop for a fault
// it never drew.
func (c Config) concurrency() int {
	if c.Concurrency <= 1 || !c.IsRemote() || c.Reproduce > 0 || rapidFlag("rapid.failfile") != "" ||
		c.Remote != nil && c.Remote.Config().Hooks.Any() {
		return 1
	}
	return min(c.Concurrency, MaxConcurrency)
}

// lanes is what the lanes of one run share: the categories each found
// and the deviations recorded. Safe for concurrent use.
type lanes struct {
	n int

	mu       sync.Mutex     // guards claimed, recorded
	claimed  map[string]int // category → the lane that found it first
	recorded map[string]bool
	count    int // deviations recorded
}

// lane is one lane of a run at Concurrency above 1 (nil for a run of
// one): its index, its share of the checks and its seed.
type lane struct {
	*lanes
	i      int
	checks int
	seed   uint64
	name   string // rapid's test name for its fail files
	// frozen is the other lanes' claims when this lane's round found its
	// violation: what its shrink takes as acknowledged.
	frozen map[string]bool
}

// searchAll runs the catalogue (catalogue.go) under t, as Concurrency
// lanes at once when that is above 1.
func (r *runState) searchAll(t *testing.T) {
	t.Helper()
	n := r.cfg.concurrency()
	checks := rapidChecks()
	if checks > 0 && n > checks {
		n = checks // a lane without a check is only its cost
	}
	if n <= 1 {
		r.catalogue(t)
		return
	}
	base := rapidSeed() // this shard's (run set it)
	if base == 0 {
		base = rand.Uint64() | 1
	}
	t.Logf("idemcheck: %d sequences in flight at once (%s=%d), %d checks in all, lane seeds from %d", n, ConcurrencyEnv, n, checks, base)
	shared := &lanes{n: n, claimed: map[string]int{}, recorded: map[string]bool{}}
	runs := make([]*runState, n)
	var wg sync.WaitGroup
	for p := range n {
		l := &lane{lanes: shared, i: p, checks: share(checks, p, n), seed: Shard{}.streamSeed(base, p, n), name: t.Name()}
		if p > 0 {
			l.name = fmt.Sprintf("%s/c%d", t.Name(), p)
		}
		c := &runState{cfg: r.cfg, mutant: r.mutant, test: r.test, stats: r.stats, started: r.started, ack: map[string]bool{}, lane: l}
		runs[p] = c
		wg.Go(func() { c.catalogue(t) })
	}
	wg.Wait()
	for _, c := range runs {
		if why := c.stoppedWhy(); why != "" {
			r.noteStopped(why)
		}
	}
}

// searchChecks is the checks the run's search may run: its lane's share,
// or -rapid.checks.
func (r *runState) searchChecks() int {
	if r.lane != nil {
		return r.lane.checks
	}
	return rapidChecks()
}

// failName is rapid's test name for the fail files of the run's rounds
// under t: its lane's.
func (r *runState) failName(t *testing.T) string {
	if r.lane != nil {
		return r.lane.name
	}
	return t.Name()
}

// roundCheck is one round's rapid.Check of prop under tb: at the lane's
// share of checks and its seed.
func (r *runState) roundCheck(tb rapid.TB, prop func(*rapid.T)) {
	if r.lane == nil {
		checkRound(tb, prop) // logreplay.go: a failing round's FailNow ends it
		return
	}
	defer func() {
		if p := recover(); p != nil && p != errRoundFailed {
			panic(p)
		}
	}()
	checkWithFlags(tb, r.lane.checks, r.lane.seed, prop)
}

// claim notes that the lane's round found v (r.mu held): the other lanes
// take its category as acknowledged from their next check; this lane's
// shrink takes the others' claims as they are now.
func (l *lane) claim(v *check.ViolationError) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.claimed[v.Category]; !ok {
		l.claimed[v.Category] = l.i
	}
	l.frozen = map[string]bool{}
	for c, by := range l.claimed {
		if by != l.i && c != v.Category {
			l.frozen[c] = true
		}
	}
}

// others adds to ack the categories the other lanes found (r.mu held):
// while shrinking, the ones they had found when this lane's round found
// its violation.
func (l *lane) others(ack map[string]bool, shrinking bool) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if shrinking {
		for c := range l.frozen {
			ack[c] = true
		}
		return
	}
	for c, by := range l.claimed {
		if by != l.i {
			ack[c] = true
		}
	}
}

// number is the run-wide number of the deviation round n of this lane
// records, of category; dup when another lane found that category first
// (that lane shrinks and records it) or recorded it already, or the lanes
// recorded max deviations (IDEMCHECK_MAX_DEVIATIONS): the deviation is
// then not recorded.
func (l *lane) number(n int, category string, max int) (_ int, dup bool) {
	if l == nil {
		return n, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if by, ok := l.claimed[category]; l.recorded[category] || ok && by != l.i || l.count >= max {
		return 0, true
	}
	l.recorded[category] = true
	l.count++
	return l.count, false
}

// takenByOther reports whether another lane claimed category first: a
// retry of this lane's round would take it as acknowledged, and search in
// vain (catalogue.go's flakyRetries); the other lane reports it.
func (l *lane) takenByOther(category string) bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	by, ok := l.claimed[category]
	return ok && by != l.i
}

// takenCut is why a lane's shrink is cut at once (shrinkEnd) when
// another lane found its category first: that lane's shrink, with its
// retries (flakyRetries), is the one recorded, and this one would only
// spend the budget.
const takenCut = "another sequence in flight found it first, and shrinks it"

// full reports whether the lanes recorded max deviations.
func (l *lane) full(max int) bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.count >= max
}

// found is endCheck's note of a round's first violation v (r.mu held): the lane's claim, and Config.OnFound.
func (r *runState) found(v *check.ViolationError) {
	r.lane.claim(v)
	if f := r.cfg.OnFound; f != nil {
		f(v.Category)
	}
}

// parallelVar is the variable that sets c's parallelism: IDEMCHECK_CONCURRENCY
// for a client service over HTTP, else IDEMCHECK_PARALLEL.
func (c Config) parallelVar() string {
	if c.OverHTTP() {
		return ConcurrencyEnv
	}
	return ParallelEnv
}
