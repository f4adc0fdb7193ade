package machine

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/sut/backend"
	"github.com/idemcheck/idemcheck/sut/remote"
	"pgregory.net/rapid"
)

// Machine is one drawn sequence: a world, and what the run told it of
// its check (Check). The run reads its outcome through its methods once
// the sequence ended (Failed, Known, Broken, Stopped, Steps, Evals).
type Machine struct {
	w     *World
	run   Check
	steps int
	safe  []check.Invariant // the safety invariants judged (safety), once known
	// failed is the first violation found; once set, the remaining drawn
	// actions do nothing and the check fails in conclude.
	failed *check.ViolationError
	// broken is a failure of the harness's own machinery (WireMock's admin
	// API did not answer, its journal disagrees with the client's record);
	// it stops the sequence like a violation and fails the check as itself.
	broken error
	// stopped says why the sequence stopped early without a verdict: a
	// remote run's budget ran out. The check then passes vacuously and Run
	// reports the run INCONCLUSIVE.
	stopped string
	// evals counts each invariant's evaluations; they reach the run's
	// statistics only when the sequence counts (endCheck).
	evals map[string]int
	// final is the world the final phase judged (when finalRead), as the
	// history stood at version finalAt (FinalWorld).
	final     check.World
	finalAt   int
	finalRead bool
	// safeEvals counts the steps judged by the safety list (m.safe),
	// folded into evals when they are read: a step adds one count, not
	// one map write per invariant (issue 29).
	safeEvals int
	// known is a violation the run's catalogue already acknowledged: it
	// ends the sequence, which then passes.
	known *check.ViolationError
	// failedWorld is the world that showed failed (or known).
	failedWorld check.World
	// leftOut are the invariants this client cannot support, by name, with
	// why (judged); nil while none.
	leftOut map[string]string
}

// Phase is what a check of the property is for.
type Phase int

const (
	// PhaseSearch: a check of the search; it counts in the statistics.
	PhaseSearch Phase = iota
	// PhaseSkip: a check an earlier round already judged; it does nothing.
	PhaseSkip
	// PhaseShrink: after the round's first violation, rapid reproducing
	// and shrinking it; it does not count.
	PhaseShrink
)

// Check is what the run tells the machine of one check of the property.
type Check struct {
	// Phase is what the check is for.
	Phase Phase
	// Ack are the categories the run's catalogue already found: they end
	// the sequence, which then passes.
	Ack map[string]bool
	// Cap, during the shrink of a violation against a URL once rapid
	// reproduced it, bounds what the shrink may spend (ShrinkCap); nil:
	// only the run's budgets.
	Cap *ShrinkCap
	// Report follows the category in the failure rapid shrinks by: the
	// report's path and what a replay needs set. It must be the same for
	// every check of a run (rapid shrinks only a failure whose message
	// stays the same).
	Report string
	// Stop is where the sequence notes why the whole run stopped early.
	Stop *Stop
	// Pulse, in a virtual-time bubble, is where the machine beats at each
	// step and phase, for the run's stall watch; nil: no watch.
	Pulse *Pulse
}

// New is the machine of one check over w.
func New(w *World, c Check) *Machine {
	return &Machine{w: w, run: c, evals: map[string]int{}}
}

// World is the machine's world.
func (m *Machine) World() *World { return m.w }

// Phase is what the check is for.
func (m *Machine) Phase() Phase { return m.run.Phase }

// Steps is how many steps the sequence ran.
func (m *Machine) Steps() int { return m.steps }

// Evals counts each invariant's evaluations, by name.
func (m *Machine) Evals() map[string]int {
	if m.safeEvals > 0 {
		for _, inv := range m.safe {
			m.evals[inv.Name] += m.safeEvals
		}
		m.safeEvals = 0
	}
	return m.evals
}

// FinalWorld is the world the final phase judged, while nothing has been
// recorded since (ok is false otherwise, or before the final phase): its
// derived data are shared with the verdicts taken over it (check.World.Shared).
func (m *Machine) FinalWorld() (w check.World, ok bool) {
	if !m.finalRead || m.w.hist.Version() != m.finalAt {
		return check.World{}, false
	}
	return m.final, true
}

// Failed is the first violation found, nil when none, and the world that
// showed it, or that showed the Known violation.
func (m *Machine) Failed() (*check.ViolationError, check.World) { return m.failed, m.failedWorld }

// Known is the violation the run's catalogue already acknowledged that
// ended the sequence, nil when none.
func (m *Machine) Known() *check.ViolationError { return m.known }

// Broken is the failure of the harness's own machinery that stopped the
// sequence, nil when none.
func (m *Machine) Broken() error { return m.broken }

// Stopped says why the sequence stopped early without a verdict, "" if it
// did not.
func (m *Machine) Stopped() string { return m.stopped }

// LeftOut are the invariants the client under test cannot support (no
// view), by name, with why; nil when none.
func (m *Machine) LeftOut() map[string]string { return m.leftOut }

// Stop is why a run stopped early without a verdict (a budget ran out, the
// provider could not be read), shared by every sequence of the run. It is
// safe for concurrent use.
type Stop struct {
	mu  sync.Mutex // guards why
	why string
}

// Note records why the run stopped, unless it already had.
func (s *Stop) Note(why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.why == "" {
		s.why = why
	}
}

// Why is why the run stopped early, "" if it did not.
func (s *Stop) Why() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.why
}

// step records the start of a step that sends nothing of its own.
func (m *Machine) step(action, args string) {
	m.stepWith(action, args, nil)
}

// drawFaults draws the fault schedule of the step about to run: what
// happens to its n-th request. A schedule per step, rather than one for the
// whole sequence, keeps each fault with the step it hits, so that shrinking
// can drop a step together with its faults.
// In real time their durations are scaled like the client's timeouts
// (Config.TimeScale), so the report shows the delays that really happened.
func (m *Machine) drawFaults(t *rapid.T) []faults.Fault {
	var gen *rapid.Generator[[]faults.Fault]
	switch n := m.w.cfg.MaxSchedule; {
	case m.w.cfg.OnRedis():
		gen = faults.StoreScheduleGen(n) // the provider's own store fails too
	case m.w.real:
		// No hang-up or outage in real time (faults/gen.go); against a
		// URL with hooks, its restarts and store outages (lifecycle.go).
		gen = faults.LifecycleScheduleGen(n, m.w.drawRestart, m.w.drawOutage)
	default:
		gen = faults.ScheduleGen(n)
	}
	fs := gen.Draw(t, "faults")
	if m.w.real {
		for i := range fs {
			fs[i].Delay = m.w.scale(fs[i].Delay)
		}
	}
	return fs
}

// stepWith records the start of a step whose requests get fs.
func (m *Machine) stepWith(action, args string, fs []faults.Fault) {
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
	m.run.Pulse.Beat(m.steps, action, args)
	m.w.faults.Schedule(fs)
	m.w.hist.BeginStep(action, args, m.w.clock.Now())
}

// check runs the safety invariants after a step, judging only what the
// step added (check.Checker; stepVerdict).
func (m *Machine) check(*rapid.T) {
	if err := m.w.endOutage(); err != nil && m.failed == nil && m.known == nil && m.broken == nil {
		m.halt(err)
	}
	m.evaluateBy(m.safety(), m.w.StepSnapshot, m.stepVerdict)
}

// safety is the safety invariants this run judges: all of them in
// process; against a remote provider, replay-consistent and
// mismatch-rejected judged from its answers alone (conformance/check/remote.go),
// or left out when a key may expire mid-run; against WireMock, whose
// answers the harness itself programs from the specification
// (sut/wiremock), those two are left out, as they would judge the harness.
// The list is worked out at the first step and kept: what it depends on
// (the world's providers, its client, the profile) is fixed for the
// sequence.
func (m *Machine) safety() []check.Invariant {
	if m.safe == nil {
		switch {
		case !m.w.real || m.w.specJudged || m.w.loopback:
			m.safe = m.judged(check.Safety())
		case m.remoteJudged():
			m.safe = m.judged(check.RemoteSafety(check.Safety(), m.w.cfg.Remote.Profile().ErrorsStored))
		default:
			m.safe = m.judged(check.WithoutProviderOnly(check.Safety()))
		}
	}
	return m.safe
}

// remoteJudged reports whether this run is against a remote provider whose
// provider-only invariants are judged from its answers (remoteJudged).
func (m *Machine) remoteJudged() bool {
	p := m.w.cfg.Remote
	if !m.w.real || !m.w.cfg.IsRemote() || p == nil {
		return false
	}
	ok, _ := RemoteJudged(p)
	return ok
}

// evaluate runs invs over the whole history (check.Evaluate: the final
// verdict) and keeps the first violation, with the world that showed it,
// for conclude.
func (m *Machine) evaluate(invs []check.Invariant) {
	m.evaluateBy(invs, m.w.Snapshot, check.Evaluate)
}

// evaluateBy is evaluate with read as the world's snapshot and judge as
// the verdict over it.
func (m *Machine) evaluateBy(invs []check.Invariant, read func() (check.World, error), judge func(check.World, []check.Invariant) *check.ViolationError) {
	if m.failed != nil || m.known != nil || m.broken != nil {
		return
	}
	m.w.clock.Settle() // a provider commit due now is in the snapshot, or not, every time
	w, err := read()
	if err != nil {
		m.halt(err)
		return
	}
	if len(invs) > 0 && len(m.safe) == len(invs) && &invs[0] == &m.safe[0] {
		m.safeEvals++
	} else {
		for _, inv := range invs {
			m.evals[inv.Name]++
		}
	}
	if v := m.w.contractViolation(); v != nil {
		m.fail(w, v)
	} else if v := judge(w, invs); v != nil {
		m.fail(w, v)
	}
}

func (m *Machine) fail(w check.World, v *check.ViolationError) {
	if w.History.Delta != nil {
		w.History = w.History.Clone() // the synced history: the next step's Sync would overwrite it
	}
	if w.State != nil { // the World's state view: the next step overwrites it in place
		w.Orders, w.Attempts, w.RefundIntents, w.State = slices.Clone(w.Orders), slices.Clone(w.Attempts), slices.Clone(w.RefundIntents), nil
	}
	if m.run.Ack[v.Category] {
		// Found earlier in the run: the sequence ends here and passes, so
		// what follows from it (two charges after a broken replay) is not
		// taken for a deviation of its own; the search goes on.
		m.known, m.failedWorld = v, w
		return
	}
	if why := m.notOfDialect(); why != "" {
		m.stopped = why + " (" + v.Invariant + " would have failed: " + v.Message + ")"
		m.run.Stop.Note(m.stopped)
		return
	}
	m.failed, m.failedWorld = v, w
}

// live wraps an action so that it does nothing once a violation is found:
// every failure is then raised at one place, conclude, whether it showed
// after a step or in the final phase. rapid accepts a shrunk sequence only
// when it fails with the same message at the same place, so this lets a
// failure found mid-sequence shrink into one found at the end.
func (m *Machine) live(action func(*rapid.T)) func(*rapid.T) {
	return func(t *rapid.T) {
		if m.failed == nil && m.known == nil && m.broken == nil && m.stopped == "" && !m.outOfBudget() {
			action(t)
		}
	}
}

// outOfBudget stops the sequence when a remote run's budget has no room
// for another step.
func (m *Machine) outOfBudget() bool {
	b, ok := m.w.prov.(backend.Budgeted)
	if !ok {
		return false
	}
	out, why := b.Exhausted()
	if !out && m.run.Phase == PhaseSearch {
		// The search leaves ShrinkShare of each budget for shrinking.
		var which string
		if out, which = b.SearchExhausted(); out {
			why = fmt.Sprintf("the %s budget is spent (its last %.0f%% is kept for shrinking)", which, backend.ShrinkShare*100)
		}
	}
	if !out && m.run.Phase == PhaseShrink {
		if why = m.shrinkCapSpent(); why != "" {
			m.stopped = why // ends this shrink attempt only (round.cut), not the run
			return true
		}
	}
	if out {
		m.stopped = why
		m.run.Stop.Note(m.stopped)
	}
	return out
}

// halt ends the sequence on an error reading the provider: a spent budget
// stops it without a verdict, as does a provider URL whose own answers
// to the harness's find-by-reference cannot be read (transient, over the
// body cap, malformed); anything else is the harness failing.
func (m *Machine) halt(err error) {
	if errors.Is(err, remote.ErrBudget) {
		m.stopped = "a budget is spent"
		if b, ok := m.w.prov.(backend.Budgeted); ok {
			if _, why := b.Exhausted(); why != "" {
				m.stopped = why // as outOfBudget says it
			}
		}
		m.run.Stop.Note(m.stopped)
		return
	}
	if errors.Is(err, remote.ErrUnavailable) { // the provider's own 429 / 5xx: not a verdict
		m.stopped = unavailable(err)
		m.run.Stop.Note(m.stopped)
		return
	}
	if m.w.real && m.w.cfg.IsRemote() { // the preflight passed; now its answers cannot be read
		m.stopped = unreadable(err)
		m.run.Stop.Note(m.stopped)
		return
	}
	m.broken = err
}

// Finish heals the faults, lets AbandonAfter plus the reconciliation
// interval pass, reconciles, and checks safety and liveness; then pays
// every abandoned order again, which must succeed under a new key.
func (m *Machine) Finish() {
	if m.failed != nil || m.known != nil || m.broken != nil || m.stopped != "" || m.outOfBudget() {
		return
	}
	w := m.w
	m.run.Pulse.Beat(0, "the final phase", "faults healed, time passed past AbandonAfter, reconciliation run")
	w.faults.Heal()
	healed := w.hist.Exchanges()
	// Let in-flight work end, then the attempts age past AbandonAfter.
	w.clock.Advance(w.ccfg.TotalTimeout + w.ccfg.AbandonAfter + w.ccfg.Interval)
	w.reconcile("reconciler (final)")
	w.clock.Advance(w.ccfg.Interval)
	w.reconcile("reconciler (final)")
	if r, ok := w.prov.(backend.Refresher); ok {
		r.Refresh() // the final verdict reads the provider's whole truth
	}
	// Safety and liveness judge one reading of the world: nothing runs
	// between them (issue 29: one copy of the history, not two).
	read := func() (check.World, error) {
		if !m.finalRead {
			w, err := m.w.Snapshot()
			if err != nil {
				return w, err // evaluateBy halts the sequence: no second read
			}
			m.final, m.finalAt, m.finalRead = w.Shared(), m.w.hist.Version(), true
		}
		return m.final, nil
	}
	m.evaluateBy(m.safety(), read, check.Evaluate)
	if why := m.unsettled(healed); why != "" && m.failed == nil && m.known == nil && m.broken == nil {
		m.stopped = why // liveness needs a provider that answers once the faults heal
		m.run.Stop.Note(why)
		return
	}
	m.evaluateBy(m.judged(check.Liveness()), read, check.Evaluate)
	m.payAbandonedAgain()
}

// Conclude fails the check with the first violation found: its category is
// the failure rapid shrinks by, its full message is logged above it.
func (m *Machine) Conclude(t *rapid.T) {
	if m.broken != nil {
		t.Fatalf("idemcheck could not judge the run: %v", m.broken)
	}
	if v := m.failed; v != nil {
		t.Log(v.Message)
		t.Fatalf("%s%s", v.Category, m.run.Report)
	}
}

// drainTime outlasts anything in flight: the longest slow processing
// (20 s), the client's total timeout, and the drop bound (5 min).
const drainTime = time.Hour

// RemoteJudged reports whether the remote provider-only invariants can be
// judged against p (check.RemoteSafety assumes no key expires during the
// run), and why not.
func RemoteJudged(p *remote.Provider) (ok bool, why string) {
	window, run := time.Duration(p.Profile().RetentionWindow), p.Config().Limits.MaxDuration
	if window > 0 && run > 0 && window < run {
		return false, "a provider-only invariant; the profile's retention window (" + window.String() + ") is shorter than the run (" + run.String() + "), so a key may expire mid-run and be processed again"
	}
	return true, ""
}

// Drain lets the provider's in-flight work end before a check ends in
// its virtual-time bubble: a bubble's time stops when its main goroutine
// exits, so a check that ends mid-sequence (a failure, a benchmark that
// has what it wanted) would otherwise leave synctest a deadlock.
//
// A check the run abandoned as stalled (Pulse.Abandoned) is not drained:
// its bubble cannot advance, and rapid may run this cleanup outside it.
func (m *Machine) Drain() {
	if m.run.Pulse.Abandoned() {
		return
	}
	m.run.Pulse.Beat(0, "the end of the sequence", "waiting for the calls still in flight, or past their bound")
	m.w.faults.Heal()
	m.w.clock.Advance(drainTime)
	m.w.drainHung()
}

// Provider is the provider under test as this world sees it.
func (w *World) Provider() backend.Backend { return w.prov }

// Injected counts the faults applied so far, by kind.
func (w *World) Injected() map[faults.Kind]int { return w.faults.Injected() }

// Schedules lists each step's drawn fault schedule, for the report.
func (w *World) Schedules() []string { return w.schedules }

// Real reports whether the world runs in real time (WireMock, a URL,
// Redis, a service over HTTP) rather than in a virtual-time bubble.
func (c Config) Real() bool {
	return c.Provider == ProviderWireMock || c.IsRemote() || c.OnRedis() || c.OverHTTP()
}

// Halt ends the sequence without a verdict, for why: the remaining drawn
// actions do nothing (a benchmark that has what it wanted).
func (m *Machine) Halt(why string) { m.stopped = why }

// Settle lets whatever is due now on the world's clock happen (a provider
// commit), so that a Snapshot taken next holds it, as a step's check does.
func (w *World) Settle() { w.clock.Settle() }
