package remote

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/idemcheck/idemcheck/reports"
)

// ErrBudget is the sentinel every *BudgetError wraps.
var ErrBudget = errors.New("remote: budget spent")

// BudgetError says which budget stopped a request: "requests", "charges"
// or "duration". The request was not sent.
type BudgetError struct {
	Resource string
	Limit    string
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("remote: %s budget of %s spent; request not sent", e.Resource, e.Limit)
}

// Unwrap makes errors.Is(err, ErrBudget) hold.
func (e *BudgetError) Unwrap() error { return ErrBudget }

// NotSent reports that the request was never sent (faults.NotSent).
func (e *BudgetError) NotSent() bool { return true }

// Meter counts what a run sends against its Limits. Take is called before
// each request, so a limit is never exceeded. It is safe for concurrent use.
type Meter struct {
	limits Limits
	start  time.Time
	now    func() time.Time

	mu       sync.Mutex // guards requests, posts
	requests int
	posts    int
}

// NewMeter starts a meter for limits (defaults filled) at now.
func NewMeter(limits Limits) *Meter {
	return &Meter{limits: limits.withDefaults(), start: time.Now(), now: time.Now}
}

// Deadline is when the duration budget runs out.
func (m *Meter) Deadline() time.Time { return m.start.Add(m.limits.MaxDuration) }

// Take reserves one request (and one charge for a create) or returns a
// *BudgetError without reserving anything.
func (m *Meter) Take(method string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	post := method == http.MethodPost
	switch {
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

// Afford reports whether requests more requests, posts of them creates,
// fit in what is left, and if not which budget is short.
func (m *Meter) Afford(requests, posts int) (bool, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case !m.now().Before(m.Deadline()):
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
