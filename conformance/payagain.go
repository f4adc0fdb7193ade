package conformance

import (
	"fmt"

	"github.com/idemcheck/idemcheck/checkout"
	"github.com/idemcheck/idemcheck/models"
)

// payAbandonedAgain checks the last clause of reconciliation-converges: an
// abandoned order can be paid again, with a new key.
func (m *machine) payAbandonedAgain() {
	w := m.w
	for _, o := range w.orders {
		before := w.attempts()
		if m.failed != nil || m.known != nil || m.broken != nil || w.order(o.ID).Status != models.OrderPlaced || !hasAbandoned(before, o.ID) {
			continue
		}
		m.step("pay-again", fmt.Sprintf("order %d with visa", o.ID))
		sent := len(w.hist.Snapshot().Exchanges)
		res := w.checkout(w.cli, "shopper", o, "visa")
		m.evaluate(m.safety()) // a broken protocol names the cause first
		if m.failed != nil || m.known != nil || m.broken != nil {
			return
		}
		snap, err := w.snapshot()
		if err != nil {
			m.halt(err)
			return
		}
		why := m.unsettled(sent)
		switch {
		case res.Outcome != checkout.Paid && why != "":
			m.stopped = why // the provider answered transiently: no verdict
			m.run.noteStopped(why)
			return
		case res.Outcome != checkout.Paid:
			m.fail(snap, asViolation(ReconciliationConverges, violation(ReconciliationConverges,
				"order %d was abandoned but paying it again answered %s", o.ID, res.Outcome)))
		case reusedKey(before, snap.Attempts, o.ID):
			m.fail(snap, asViolation(ReconciliationConverges, violation(ReconciliationConverges,
				"order %d was paid again under an earlier intent's key", o.ID)))
		}
	}
}

func asViolation(name string, f Finding) *ViolationError {
	return &ViolationError{Invariant: name, Message: f.Message, Category: f.Category}
}

func hasAbandoned(as []models.PaymentAttempt, order int64) bool {
	for _, a := range as {
		if a.OrderID == order && a.Status == models.AttemptAbandoned {
			return true
		}
	}
	return false
}

// reusedKey reports whether order's Succeeded attempt in after carries a key
// that one of its attempts in before already had.
func reusedKey(before, after []models.PaymentAttempt, order int64) bool {
	old := map[string]bool{}
	for _, a := range before {
		if a.OrderID == order {
			old[a.IdempotencyKey] = true
		}
	}
	for _, a := range after {
		if a.OrderID == order && a.Status == models.AttemptSucceeded && old[a.IdempotencyKey] {
			return true
		}
	}
	return false
}
