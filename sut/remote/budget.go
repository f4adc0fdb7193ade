package remote

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idemcheck/idemcheck/reports"
)

// ErrBudget is the sentinel every *BudgetError wraps.
var ErrBudget = errors.New("remote: budget spent")

// BudgetError says which budget stopped a request: "requests", "charges"
// or "duration". The request was not sent, except for a request the
// duration budget's deadline ended in flight.
type BudgetError struct {
	Resource string
	Limit    string
	inFlight bool // sent, and ended at the deadline
}

func (e *BudgetError) Error() string {
	if e.inFlight {
		return fmt.Sprintf("remote: %s budget of %s spent; the request in flight was ended at the deadline", e.Resource, e.Limit)
	}
	return fmt.Sprintf("remote: %s budget of %s spent; request not sent", e.Resource, e.Limit)
}

// Unwrap makes errors.Is(err, ErrBudget) hold.
func (e *BudgetError) Unwrap() error { return ErrBudget }

// NotSent reports whether the request was never sent (faults.NotSent).
func (e *BudgetError) NotSent() bool { return !e.inFlight }

// HoldError is a request not sent because the provider asked, with
// Retry-After, for a wait that outlasts the duration budget: the run stops
// INCONCLUSIVE with this reason.
type HoldError struct {
	// Asked is the Retry-After the provider answered; Left is what was
	// left of the duration budget then.
	Asked, Left time.Duration
}

func (e *HoldError) Error() string {
	return fmt.Sprintf("remote: the provider asked (Retry-After) to wait %s, longer than the %s left of the duration budget; request not sent",
		roundText(e.Asked), roundText(e.Left))
}

// Unwrap makes errors.Is(err, ErrBudget) hold: the duration budget cannot
// cover the wait.
func (e *HoldError) Unwrap() error { return ErrBudget }

// NotSent reports that the request was never sent (faults.NotSent).
func (e *HoldError) NotSent() bool { return true }

// roundText is d rounded for a sentence: to the second, or "over 100
// years" for a Retry-After that would not fit in a time.Duration.
func roundText(d time.Duration) string {
	if d >= maxRetryAfter {
		return "over 100 years"
	}
	return d.Round(time.Second).String()
}

// Meter counts what a run sends against its Limits. Take is called before
// each request, so a limit is never exceeded. It is safe for concurrent use.
type Meter struct {
	limits Limits
	start  time.Time
	now    func() time.Time

	mu       sync.Mutex // guards requests, posts, heldAt, held
	requests int
	posts    int
	heldAt   time.Time     // when the provider last asked to wait
	held     time.Duration // for how long (its Retry-After)

	stopped atomic.Bool // Stop or Interrupt was called
	// interrupted ends at Interrupt, why says why; a request in flight
	// then is ended (withDeadline).
	interrupted context.Context
	interrupt   context.CancelFunc
	stopOnce    sync.Once
	why         atomic.Pointer[string]
}

// Stop is Interrupt with the reason "the run was interrupted".
func (m *Meter) Stop() { m.Interrupt("the run was interrupted") }

// Interrupt ends the run now (a user's interrupt; why says so, e.g. "the
// run was interrupted (SIGINT)"): every later Take refuses with an
// *InterruptError and Afford with "interrupted", and every request in
// flight is ended at once, so the run stops INCONCLUSIVE with why as its
// reason and writes what it judged. Only the first call's why is kept.
func (m *Meter) Interrupt(why string) {
	m.stopOnce.Do(func() {
		m.why.Store(&why)
		m.stopped.Store(true)
		m.interrupt()
	})
}

// Interrupted is why the run was interrupted (Interrupt), "" if it was
// not.
func (m *Meter) Interrupted() string {
	if w := m.why.Load(); w != nil {
		return *w
	}
	return ""
}

// InterruptError is a request the run's interrupt (Meter.Interrupt)
// refused, or ended in flight. It wraps ErrBudget: like a spent budget,
// it stops the run without a verdict.
type InterruptError struct {
	Why      string // Meter.Interrupt's reason
	inFlight bool   // sent, and ended by the interrupt
}

func (e *InterruptError) Error() string {
	if e.inFlight {
		return "remote: " + e.Why + "; the request in flight was ended"
	}
	return "remote: " + e.Why + "; request not sent"
}

// Unwrap makes errors.Is(err, ErrBudget) hold.
func (e *InterruptError) Unwrap() error { return ErrBudget }

// NotSent reports whether the request was never sent (faults.NotSent).
func (e *InterruptError) NotSent() bool { return !e.inFlight }

// NewMeter starts a meter for limits (defaults filled) at now.
func NewMeter(limits Limits) *Meter {
	m := &Meter{limits: limits.withDefaults(), start: time.Now(), now: time.Now}
	m.interrupted, m.interrupt = context.WithCancel(context.Background())
	return m
}

// Deadline is when the duration budget runs out.
func (m *Meter) Deadline() time.Time { return m.start.Add(m.limits.MaxDuration) }

// Hold records a Retry-After of d the provider answered now: nothing is
// sent to it (Wait) until d has passed, for the rest of the run. A
// shorter hold never shortens a longer one.
func (m *Meter) Hold(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if until := now.Add(d); d >= maxRetryAfter || until.After(m.heldAt.Add(m.held)) {
		m.heldAt, m.held = now, d
	}
}

// Held is the *HoldError a request would get now, when the provider's
// last Retry-After outlasts the duration budget, else nil.
func (m *Meter) Held() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.heldPastDeadline()
}

func (m *Meter) heldPastDeadline() error {
	now := m.now()
	if m.held <= 0 || !now.Before(m.heldAt.Add(m.held)) {
		return nil
	}
	if m.held >= maxRetryAfter || !m.heldAt.Add(m.held).Before(m.Deadline()) {
		return &HoldError{Asked: m.held, Left: max(m.Deadline().Sub(now), 0)}
	}
	return nil
}

// Wait returns once the provider's last Retry-After has passed (at once
// when there is none): a *HoldError, without waiting, when it outlasts the
// duration budget; an *InterruptError at the run's interrupt; ctx's
// error when ctx ends first.
func (m *Meter) Wait(ctx context.Context) error {
	if why := m.Interrupted(); why != "" {
		return &InterruptError{Why: why}
	}
	m.mu.Lock()
	if err := m.heldPastDeadline(); err != nil {
		m.mu.Unlock()
		return err
	}
	d := m.heldAt.Add(m.held).Sub(m.now())
	m.mu.Unlock()
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return m.Wait(ctx) // a later answer may have asked for longer
	case <-m.interrupted.Done():
		return &InterruptError{Why: m.Interrupted()}
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Take reserves one request (and one charge for a create) or returns a
// *BudgetError without reserving anything.
func (m *Meter) Take(method string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	post := method == http.MethodPost
	switch {
	case m.stopped.Load():
		return &InterruptError{Why: m.Interrupted()}
	case !m.now().Before(m.Deadline()):
		return &BudgetError{Resource: "duration", Limit: m.limits.MaxDuration.String()}
	case m.requests >= m.limits.MaxRequests:
		return &BudgetError{Resource: "requests", Limit: fmt.Sprint(m.limits.MaxRequests)}
	case post && m.posts >= m.limits.MaxCharges:
		return &BudgetError{Resource: "charges", Limit: fmt.Sprint(m.limits.MaxCharges)}
	}
	m.requests++
	if post {
		m.posts++
	}
	return nil
}

// takeResend reserves one more request for a request sent again as the
// same one (a 417 to its Expect: 100-continue, wire.RoundTrip): the
// requests budget counts what the provider receives. It is a second
// create of the charges budget when the first one's body reached the
// provider (bodySent), which then received a whole create; not when the
// expectation was refused from the headers alone, which processed
// nothing. A *BudgetError (or *InterruptError) when it does not fit.
func (m *Meter) takeResend(bodySent bool) error {
	if bodySent {
		return m.Take(http.MethodPost)
	}
	return m.Take(http.MethodGet) // a request that creates nothing
}

// Afford reports whether requests more requests, posts of them creates,
// fit in what is left, and if not which budget is short ("interrupted"
// after Interrupt: Interrupted says why).
func (m *Meter) Afford(requests, posts int) (bool, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.stopped.Load():
		return false, "interrupted"
	case !m.now().Before(m.Deadline()), m.heldPastDeadline() != nil:
		return false, "duration"
	case m.requests+requests > m.limits.MaxRequests:
		return false, "requests"
	case m.posts+posts > m.limits.MaxCharges:
		return false, "charges"
	}
	return true, ""
}

// Used returns the requests and creates sent so far.
func (m *Meter) Used() (requests, posts int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.requests, m.posts
}

// Budgets is the meter's state for a certification report: requests and
// charges (creates sent, an upper bound on charges made) used of their
// limits, and the elapsed wall-clock time of the duration budget.
func (m *Meter) Budgets() []reports.Budget {
	req, posts := m.Used()
	el := m.now().Sub(m.start).Round(time.Millisecond)
	return []reports.Budget{
		{Name: "requests", Used: fmt.Sprint(req), Limit: fmt.Sprint(m.limits.MaxRequests)},
		{Name: "charges", Used: fmt.Sprint(posts), Limit: fmt.Sprint(m.limits.MaxCharges)},
		{Name: "duration", Used: el.String(), Limit: m.limits.MaxDuration.String()},
	}
}
