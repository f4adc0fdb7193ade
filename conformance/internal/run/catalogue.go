package run

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/conformance/internal/machine"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/backend"
)

// The failure catalogue. rapid stops at the first failure, so against a
// URL the property runs in rounds, each one rapid.Check: a round's first
// violation is reproduced and shrunk by rapid as usual and recorded as a
// deviation (its own minimal counterexample, fail file, replay line,
// report and curl script); the next round searches again with that
// category acknowledged — a sequence ends, passing, at its first
// acknowledged violation, so what follows from it (two charges after a
// broken replay) is not taken for a deviation of its own, and a deviation
// that shows only after an acknowledged one is left to other sequences —
// until a round finds nothing new, the search budget
// or rapid's check count (-rapid.checks, shared by all rounds) is spent,
// or Config.MaxDeviations deviations are found. Sequences an earlier round judged are
// skipped, so under one -rapid.seed the rounds go on where the last one
// stopped and the run is as reproducible as one rapid.Check.

// DefaultShrinkTime is rapid's shrink time when neither -rapid.shrinktime
// nor RAPID_SHRINKTIME sets it: rapid's own 30 s shrink only a dozen real-
// time sequences against a URL (counterexamples of 11–14 steps where 3
// suffice). The reserved share of the budgets bounds a remote shrink
// first; in process a shrink ends long before either.
const DefaultShrinkTime = 15 * time.Minute

func init() {
	// rapid reads its flags only when a check runs; the command line
	// (-rapid.shrinktime) still wins, since go test parses it after init.
	if _, set := os.LookupEnv("RAPID_SHRINKTIME"); !set {
		if f := flag.Lookup("rapid.shrinktime"); f != nil {
			_ = f.Value.Set(DefaultShrinkTime.String())
			f.DefValue = DefaultShrinkTime.String()
		}
	}
}

// round is one rapid.Check of a run; runState.mu guards it.
type round struct {
	n       int       // 1-based: the deviation this round may find
	replays int       // fail files rapid replays before its search
	skip    int       // search checks earlier rounds judged
	calls   int       // checks begun before the first violation
	shrinks int       // checks begun after it (rapid reproducing, shrinking)
	started time.Time // when the round began
	// found is the round's first violation, at foundAt; rapid then
	// reproduces and shrinks it.
	found   *check.ViolationError
	foundAt time.Time
	// smallest is the last failing world, smallestV its violation: the
	// shrunk counterexample once rapid is done.
	smallest  reports.Failure
	smallestV *check.ViolationError
	// smallestBits are rapid's draws of smallest, when rapid recorded
	// them (drawnBits), for the fail file of a shrink the run ended.
	smallestBits []uint64
	// ended counts the shrink's checks that failed at once after it was
	// cut (shrinkEnd); rapid's fail file then holds no draws until record
	// puts smallest's in (keepSmallest).
	ended int
	// cut says why a shrink attempt stopped without a verdict (a budget,
	// the deviation's cap), or why the run ended the shrink (known).
	cut string
	// known, against a URL, is why found was known when the round found
	// it (knownWhy): its shrink is cut once rapid reproduced it.
	known string
	// cap bounds the shrink of a deviation that is not known, once rapid
	// reproduced it (shrinkcap.go).
	cap *machine.ShrinkCap
	// fromRequests and fromCreates are what the run had used when the
	// round found its violation: its shrink's spend counts from there.
	fromRequests, fromCreates int
	// replayed: found is the failure of a fail file rapid replayed, which
	// rapid does not shrink (nothing to cut).
	replayed bool
	// shapes are the shortest shapes of the reproduction, to try before
	// rapid's shrink (shapes.go); shapeTries how many were tried.
	shapes     [][]uint64
	shapeTries int
	// counted is how many of the round's first checks are already in the
	// statistics (a retry of the round, flakyRetries).
	counted int
}

// beginCheck says what the check about to start is for.
func (r *runState) beginCheck() machine.Phase {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.round.found != nil {
		r.round.shrinks++
		return machine.PhaseShrink
	}
	r.round.calls++
	if c := r.round.calls - r.round.replays; c > 0 && c <= r.round.skip {
		return machine.PhaseSkip
	}
	return machine.PhaseSearch
}

// endCheck takes in what check m ended with: the invariants its client
// could not support, its failing world (the last one kept when rapid is
// done is the shrunk counterexample), a shrink cut short; and counts a
// search check that ran to a verdict — the failing one included — noting
// a round's first violation.
func (r *runState) endCheck(m *machine.Machine, bits []uint64) {
	if lo := m.LeftOut(); lo != nil {
		r.stats.leaveOut(lo)
	}
	failed, w := m.Failed()
	if failed != nil {
		r.remember(m, w, failed, bits)
	}
	switch {
	case m.Phase() == machine.PhaseSkip:
		return
	case m.Phase() == machine.PhaseShrink:
		r.mu.Lock()
		if m.Stopped() != "" && r.round.cut == "" {
			r.round.cut = m.Stopped()
		}
		r.reproduced(m)
		inv, steps := r.round.smallest.Invariant, len(r.round.smallest.History.Steps)
		r.mu.Unlock()
		if f := r.cfg.OnShrink; f != nil && inv != "" {
			f(inv, steps)
		}
		return
	case m.Broken() != nil || failed == nil && m.Stopped() != "":
		return // no verdict
	}
	r.mu.Lock()
	counted := r.round.calls <= r.round.counted // a retry's check run before
	r.mu.Unlock()
	if !counted {
		r.stats.sequence(m)
		if f := r.cfg.OnSequence; f != nil {
			f()
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case failed != nil && r.round.found == nil:
		r.round.found, r.round.foundAt, r.round.replayed = failed, time.Now(), r.round.calls <= r.round.replays
		r.found(failed) // concurrent.go
		if req, creates, ok := r.used(); ok {
			r.round.known, r.round.fromRequests, r.round.fromCreates = r.knownWhy(failed), req, creates
		}
	case failed == nil && r.round.calls > r.round.replays:
		r.done++
	}
}

// remember keeps the failing world of a check: the last one kept when
// rapid is done is the shrunk counterexample. rapid's shrinker accepts a
// smaller sequence that fails at the same place (Conclude), whatever its
// message, so the shrunk violation may be of another category than the
// round's first one; the deviation is the shrunk one, as rapid reports it.
// bits are rapid's draws of the check, nil when rapid did not record them;
// in real time a shrink check without them is not kept (keepsDraws).
func (r *runState) remember(m *machine.Machine, w check.World, v *check.ViolationError, bits []uint64) {
	if !keepsDraws(r.cfg.IsRemote(), m.Phase(), bits) {
		return
	}
	f := failureOf(r, m, w, v)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.round.smallest, r.round.smallestV, r.round.smallestBits = f, v, bits
	r.last.set(f)
}

// acknowledged is a copy of the categories found so far (by every lane).
func (r *runState) acknowledged() map[string]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]bool, len(r.ack))
	for k := range r.ack {
		out[k] = true
	}
	r.lane.others(out, r.round.found != nil) // the other lanes' (concurrent.go)
	return out
}

// roundTB is the TB one round's rapid.Check reports to: rapid's verdict
// is kept for the catalogue to judge, not passed on to the test (a KNOWN
// deviation must not fail it, nor rapid's "flaky" reach the reader).
type roundTB struct {
	*testing.T
	name   string     // rapid's test name for fail files (runState.failName)
	mu     sync.Mutex // guards failed, text
	failed bool
	text   []string
}

// errRoundFailed ends a failing round's rapid.Check (its FailNow).
var errRoundFailed = errors.New("conformance: the round failed")

func (tb *roundTB) Errorf(format string, args ...any) { tb.record(fmt.Sprintf(format, args...)) }
func (tb *roundTB) Error(args ...any)                 { tb.record(fmt.Sprint(args...)) }
func (tb *roundTB) Fatalf(format string, args ...any) { tb.Errorf(format, args...); tb.FailNow() }
func (tb *roundTB) Fatal(args ...any)                 { tb.Error(args...); tb.FailNow() }
func (tb *roundTB) Fail()                             { tb.record("") }
func (tb *roundTB) FailNow()                          { tb.Fail(); panic(errRoundFailed) }

func (tb *roundTB) Name() string {
	if tb.name != "" {
		return tb.name
	}
	return tb.T.Name()
}

func (tb *roundTB) Failed() bool {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.failed
}

func (tb *roundTB) record(s string) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.failed = true
	if s != "" {
		tb.text = append(tb.text, s)
	}
}

func (tb *roundTB) message() string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return strings.Join(tb.text, "\n")
}

// flakyRetries is how many times the catalogue runs a round again when
// rapid ended its shrink as "flaky" (a smaller sequence failed once but
// not when run again: real-time timing), so that a deviation is not
// reported at whatever length that ended it at. The round's search is
// the same, so its violation comes back and is shrunk afresh; the retry
// is kept when it found the same category and its counterexample is
// smaller (or as small, from a shrink rapid reproduced to its end).
const flakyRetries = 5

// catalogue runs the property in rounds under t (see above) and records
// every deviation: a FAIL fails t, a KNOWN one is only logged.
func (r *runState) catalogue(t *testing.T) {
	t.Helper()
	checks := r.searchChecks()
	for n := 1; n <= r.cfg.MaxDeviations; n++ {
		rd, text, failed := r.runRound(t, n, 0)
		if !failed {
			return
		}
		if rd.found == nil || rd.smallestV == nil {
			t.Error(text) // the harness could not judge: not a deviation
			return
		}
		// A known deviation is not shrunk again: it is reported, not fixed.
		for try := 1; try <= flakyRetries && rd.known == "" && flaky(text) && !r.searchSpent() && !r.lane.takenByOther(rd.smallestV.Category); try++ {
			again, atext, ok := r.retryRound(t, rd, failFileIn(text))
			if !ok {
				t.Logf("idemcheck: round %d again (%d of %d) did not find its category again", n, try, flakyRetries)
				continue
			}
			t.Logf("idemcheck: round %d: rapid could not reproduce a shrink step (real-time timing) at %d steps; the round again (%d of %d): %d steps%s", n, len(rd.smallest.History.Steps), try, flakyRetries, len(again.smallest.History.Steps), map[bool]string{true: ", reproduced to the end of its shrink"}[!flaky(atext)])
			if was, now := len(rd.smallest.History.Steps), len(again.smallest.History.Steps); now < was || now == was && !flaky(atext) {
				removeFailFile(failFileIn(text))
				rd, text = again, atext
			} else {
				removeFailFile(failFileIn(atext))
			}
		}
		t.Logf("idemcheck: round %d took %s: %d checks up to its violation, %d to reproduce and shrink it", n, time.Since(rd.started).Round(time.Millisecond), rd.calls, rd.shrinks)
		r.record(t, rd, text)
		r.mu.Lock()
		r.acknowledge(rd)
		done := r.done
		r.mu.Unlock()
		if r.stoppedWhy() != "" || done >= checks || r.lane.full(r.cfg.MaxDeviations) {
			return
		}
	}
	t.Logf("idemcheck: the catalogue stops after %d deviations (IDEMCHECK_MAX_DEVIATIONS)", r.cfg.MaxDeviations)
}

// runRound runs round n's rapid.Check and returns the round, rapid's
// message and whether rapid failed; the round's first counted checks
// (counted, for a retry) are not counted again in the statistics.
func (r *runState) runRound(t *testing.T, n, counted int) (round, string, bool) {
	r.mu.Lock()
	r.round = round{n: n, replays: keptFailFiles(r.failName(t)), skip: r.done, started: time.Now(), counted: counted}
	r.roundT = t
	r.mu.Unlock()
	tb := &roundTB{T: t, name: r.failName(t)}
	r.roundCheck(tb, r.Property()) // a lane's checks and seed (concurrent.go)
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.round, tb.message(), tb.Failed()
}

// retryRound runs rd's round again (flakyRetries) with rd's fail file
// ff put aside, so rapid searches and shrinks instead of replaying it. It
// returns the retry when it found rd's category again; otherwise the run
// is put back as it was (ok false).
func (r *runState) retryRound(t *testing.T, rd round, ff string) (again round, text string, ok bool) {
	aside := ff + ".aside"
	if ff != "" && os.Rename(ff, aside) != nil {
		return round{}, "", false
	}
	defer func() {
		if ff != "" {
			_ = os.Rename(aside, ff)
		}
	}()
	r.mu.Lock()
	done := r.done
	r.mu.Unlock()
	again, text, failed := r.runRound(t, rd.n, rd.calls)
	again.started = rd.started
	if nf := failFileIn(text); nf != "" {
		// rapid names a fail file by the second: the retry's may have
		// taken ff's name; it gets one of its own.
		pid := "-" + strconv.Itoa(os.Getpid()) + ".fail"
		to := strings.TrimSuffix(strings.TrimSuffix(nf, pid), ".fail") + "-retry" + strconv.Itoa(int(retries.Add(1))) + pid
		if os.Rename(nf, to) == nil {
			text = strings.ReplaceAll(text, nf, to)
		}
	}
	if failed && again.smallestV != nil && again.smallestV.Category == rd.smallestV.Category {
		return again, text, true
	}
	removeFailFile(failFileIn(text))
	r.mu.Lock()
	r.done = done
	r.mu.Unlock()
	return round{}, "", false
}

// searchSpent reports whether the run stopped, or a remote run's search
// share of a budget is spent: a retry's search could not run.
func (r *runState) searchSpent() bool {
	if r.stoppedWhy() != "" {
		return true
	}
	if r.cfg.Remote == nil {
		return false
	}
	out, _ := backend.SearchExhausted(r.cfg.Remote)
	return out
}

// retries numbers the fail files of retried rounds (retryRound).
var retries atomic.Int64

// record writes the round's deviation (its smallest counterexample) and
// adds it to the run's statistics.
func (r *runState) record(t *testing.T, rd round, rapidText string) {
	t.Helper()
	f, v := rd.smallest, rd.smallestV
	var dup bool
	if rd.n, dup = r.lane.number(rd.n, v.Category, r.cfg.MaxDeviations); dup { // concurrent.go
		t.Logf("idemcheck: %s is not recorded again: another sequence in flight found it too, or the catalogue is full", v.Category)
		removeFailFile(failFileIn(rapidText))
		return
	}
	ff := r.keepFailFile(keepSmallest(failFileIn(rapidText), rd.smallestBits, rd.cut != ""), rd)
	f.Replay, f.Seed, f.Explanation, f.Category = replayCommand(r, ff), failFileSeed(ff), explain(f), v.Category
	if rd.cut != "" && ff != "" && !r.logReplay(t, rd, ff) {
		f.Notes = append(f.Notes, "Its fail file did not fail again when replayed once after its shrink was cut (real-time timing, or a budget spent): replay it a few times (IDEMCHECK_REPRODUCE).")
	}
	switch {
	case r.cfg.Reproduce > 0 && (ff == "" || budgetCut(rd.cut)):
		t.Logf("idemcheck: reproducibility of deviation %d not checked: %s", rd.n, orElse(rd.cut, "rapid kept no fail file"))
	case r.cfg.Reproduce > 0:
		// Each replay runs the catalogue on the fail file alone, with no
		// baseline, so a deviation that came back fails it.
		rep, err := r.reproduceMatching("FAIL: "+v.Invariant+" violated", ff, "IDEMCHECK_BASELINE=", "IDEMCHECK_MAX_DEVIATIONS=1")
		if err != nil {
			t.Logf("idemcheck: reproducibility check of deviation %d stopped: %v", rd.n, err)
		} else {
			f.Reproducibility = &rep
		}
	}
	minimal, remedy := minimality(rd.cut, rapidText, rd.shrinks, time.Since(rd.foundAt) >= rapidShrinkTime(), rapidFlag("rapid.failfile") != "", f.Reproducibility)
	if minimal != "minimal" {
		f.Notes = append(f.Notes, "This counterexample is "+minimal+": the smallest failing sequence found, maybe not the smallest there is. "+remedy)
	}
	verdict := reports.Fail
	if r.cfg.Baseline.Knows(v) {
		verdict = reports.Known
	}
	f.Verdict = verdict
	p, err := reports.WriteDeviationRun(r.cfg.ReportDir, r.started, rd.n, f, invariantNames())
	if err != nil {
		t.Logf("idemcheck: could not write the report: %v", err)
	}
	d := reports.Deviation{Invariant: v.Invariant, Category: v.Category, Message: v.Message,
		Verdict: verdict, Steps: len(f.History.Steps), Minimal: minimal, Replay: f.Replay, FailFile: ff,
		Report: relTo(r.cfg.ReportDir, p.Markdown), Curl: relTo(r.cfg.ReportDir, p.Curl), Shrink: r.shrinkSpend(rd)}
	r.stats.deviation(d)
	if w, ok := chargesWitness(rd.n, d, f.Charges); ok {
		r.stats.witnessed(w)
	}
	line := fmt.Sprintf("idemcheck: deviation %d, %s: %s violated after %d shopper steps (%s)\n%s\n%s\ncategory: %s\nreport: %s\ncurl:   %s\nreplay: %s%s",
		rd.n, verdict, v.Invariant, len(f.History.Steps), minimal, f.Explanation, v.Message, v.Category,
		fromRoot(p.Markdown), fromRoot(p.Curl), f.Replay, replayWhere())
	if verdict == reports.Fail {
		t.Error(line)
	} else {
		t.Log(line)
	}
}

// rapidChecks is rapid's check count (-rapid.checks, RAPID_CHECKS).
func rapidChecks() int {
	if f := flag.Lookup("rapid.checks"); f != nil {
		if n, err := strconv.Atoi(f.Value.String()); err == nil {
			return n
		}
	}
	return 100
}

// rapidShrinkTime is rapid's shrink time (-rapid.shrinktime).
func rapidShrinkTime() time.Duration {
	if f := flag.Lookup("rapid.shrinktime"); f != nil {
		if d, err := time.ParseDuration(f.Value.String()); err == nil {
			return d
		}
	}
	return DefaultShrinkTime
}

// ProviderTag names a provider in subtest and fail-file names, so that one
// provider's kept counterexample is never replayed against another:
// "url-" and the first 8 hex digits of the SHA-256 of the URL without its
// credentials for a URL, "wiremock" for WireMock, "" for the embedded
// provider.
func ProviderTag(provider string) string {
	switch {
	case provider == machine.ProviderWireMock:
		return "wiremock"
	case provider == "" || provider == machine.ProviderEmbedded:
		return ""
	}
	sum := sha256.Sum256([]byte(reports.RedactURL(provider)))
	return "url-" + hex.EncodeToString(sum[:4])
}

// orElse is s, or none when s is empty.
func orElse(s, none string) string {
	if s == "" {
		return none
	}
	return s
}
