package machine

import (
	"fmt"
	"net/http"

	"github.com/idemcheck/idemcheck/checkout"
	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
)

// payAbandonedAgain checks the last clause of reconciliation-converges: an
// abandoned order can be paid again, with a new key.
func (m *Machine) payAbandonedAgain() {
	w := m.w
	for _, o := range w.orders {
		before := w.attempts()
		if m.failed != nil || m.known != nil || m.broken != nil || m.stopped != "" || w.order(o.ID).Status != models.OrderPlaced || !hasAbandoned(before, o.ID) {
			continue
		}
		m.step("pay-again", fmt.Sprintf("order %d with visa", o.ID))
		sent := w.hist.Exchanges()
		res := w.checkout(w.cli, "shopper", o, "visa")
		m.evaluate(m.safety()) // a broken protocol names the cause first
		if m.failed != nil || m.known != nil || m.broken != nil {
			return
		}
		if res.Outcome == checkout.Pending && m.outlasted(sent) {
			// The provider was still processing the pay-again's create
			// when the client gave up on it (a provider slower than the
			// client's timeouts, in real time): an unknown outcome the
			// client is right to report. Reconciliation must settle it.
			w.clock.Advance(w.ccfg.TotalTimeout + w.ccfg.MinAge + w.ccfg.Interval)
			w.reconcile("reconciler (after paying again)")
			m.evaluate(m.safety())
			if m.failed != nil || m.known != nil || m.broken != nil {
				return
			}
			if w.order(o.ID).Status == models.OrderPaid {
				res.Outcome = checkout.Paid
			}
		}
		snap, err := w.Snapshot()
		if err != nil {
			m.halt(err)
			return
		}
		why := m.unsettled(sent)
		if why == "" && res.Outcome != checkout.Paid {
			why = m.refusedOutright(sent)
		}
		switch {
		case res.Outcome != checkout.Paid && why != "":
			m.stopped = why // the provider answered transiently, or refused outright: no verdict
			m.run.Stop.Note(why)
			return
		case res.Outcome != checkout.Paid:
			m.fail(snap, asViolation(check.ReconciliationConverges, check.Violation(check.ReconciliationConverges,
				"order %d was abandoned but paying it again answered %s", o.ID, res.Outcome)))
		case reusedKey(before, snap.Attempts, o.ID):
			m.fail(snap, asViolation(check.ReconciliationConverges, check.Violation(check.ReconciliationConverges,
				"order %d was paid again under an earlier intent's key", o.ID)))
		}
	}
}

// outlasted reports whether, in real time, a create sent since exchange
// from reached the provider and was answered only after the client had
// given up on it, or not yet: the provider outlasted the client's try.
func (m *Machine) outlasted(from int) bool {
	if !m.w.real {
		return false // in virtual time the healed faults leave no slow processing
	}
	m.w.Settle()
	exs := m.w.hist.Snapshot().Exchanges
	for _, e := range exs[min(from, len(exs)):] {
		if e.IsPost() && e.Forwarded && e.Done && e.Status == 0 && (!e.ProviderDone || e.ProviderDoneAt.After(e.DoneAt)) {
			return true
		}
	}
	return false
}

func asViolation(name string, f check.Finding) *check.ViolationError {
	return &check.ViolationError{Invariant: name, Message: f.Message, Category: f.Category}
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

// refusedOutright says why the creates sent since exchange from are no
// verdict on convergence against a URL, or "": each one the provider
// answered was refused outright, with a 4xx that is neither a decline
// (402) nor about the key (409, 422) — a wrong path, a body it will not
// read (404, 400, 401, 403 …) — as it refuses every create of a
// provider not in the dialect; the requirements call such answers
// INCONCLUSIVE too.
func (m *Machine) refusedOutright(from int) string {
	if !m.w.real || !m.w.cfg.IsRemote() {
		return ""
	}
	exs := m.w.hist.Snapshot().Exchanges
	seen := map[string]int{}
	for _, e := range exs[min(from, len(exs)):] {
		if !e.IsPost() || !e.ProviderDone {
			continue
		}
		switch s := e.ProviderStatus; {
		case s >= 400 && s < 500 && s != http.StatusPaymentRequired && s != http.StatusConflict && s != http.StatusUnprocessableEntity && s != http.StatusTooManyRequests:
			seen[fmt.Sprint(s)]++
		default:
			return "" // an answer about the payment or the key: the verdict stands
		}
	}
	if len(seen) == 0 {
		return ""
	}
	return "the provider refused every create of paying an abandoned order again (" + reports.Tally(seen) + "), as it refuses a request not in its dialect: reconciliation-converges not judged"
}
