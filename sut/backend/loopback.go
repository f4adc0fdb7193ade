package backend

import (
	"context"
	"net/http"
	"time"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/mutants"
)

// Loopback is the embedded provider serving a service in another process,
// in real time: like a remote provider, it goes on processing a request
// whose client hung up (Detached), and the run's clock waits for those
// answers before time jumps — else a reconciliation asked while the
// provider was still charging, abandoned the attempt, and the charge that
// landed after it showed as books-balance (found by TestServiceOverHTTP).
type Loopback struct {
	*Embedded
	wire     *Detached
	budget   time.Duration // the run's ServiceOptions.MaxDuration
	deadline time.Time     // when it ends
}

// NewLoopback is the embedded provider (NewEmbedded's processing,
// retention and mutant m) on the real-time Clock it returns, within the
// duration budget that ends at deadline (zero: never).
func NewLoopback(processing, retention time.Duration, m *mutants.Mutant, hist *models.History, budget time.Duration, deadline time.Time) (faults.Clock, Loopback) {
	clock := &faults.OffsetClock{}
	e := NewEmbedded(processing, retention, m, hist, clock.Now)
	l := Loopback{Embedded: e, wire: NewDetached(e.Wire(), func(context.Context) error { return nil }),
		budget: budget, deadline: deadline}
	return Clock{OffsetClock: clock, Quiesce: l.wire.Quiesce}, l
}

// Wire implements Backend.
func (l Loopback) Wire() http.RoundTripper { return l.wire }

// Exhausted implements Budgeted: the run's duration budget has ended
// (never, for a world built without CheckService's deadline).
func (l Loopback) Exhausted() (bool, string) {
	if l.deadline.IsZero() || time.Now().Before(l.deadline) {
		return false, ""
	}
	return true, "the duration budget (ServiceOptions.MaxDuration " + l.budget.String() + ") is spent"
}

// SearchExhausted implements Budgeted: less than ShrinkShare of the
// duration budget is left.
func (l Loopback) SearchExhausted() (bool, string) {
	if !l.deadline.IsZero() && time.Until(l.deadline) < time.Duration(float64(l.budget)*ShrinkShare) {
		return true, "duration (ServiceOptions.MaxDuration " + l.budget.String() + ")"
	}
	return false, ""
}
