package machine

import (
	"fmt"
	"time"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/client"
	"pgregory.net/rapid"
)

// resendDuringReconcile, the action reconcile-during-checkout (its name
// sorts after reconcile: named to sort next to checkout it moved the
// matrix's 2-step minima of replay-new-charge and others to 3), is reconciliation
// overlapping a resend still in flight at the provider (issue 28): after the job was down raceDowntime
// (past AbandonAfter), the shopper retries the order of an Open attempt
// with its card, resending its old key, and gap later (1–9 s, while the
// resend's tries may still be out or processing) the reconciliation job
// starts, concurrently, on the same instance. Its schedule is led by slow
// processing past the client's total timeout (faults.KindSlowPastTotal),
// so the resend is still being processed when the job's lookup runs and
// when the step ends; the rest of it is drawn. A
// reconciler that abandons on that first empty lookup leaves a charge on
// an abandoned attempt (books-balance).
//
// With several client instances, half of these steps draw the other
// order (resendAfterRead): the job reads first, and the resend lands on
// another instance between its read and its write.
func (m *Machine) resendDuringReconcile(t *rapid.T) {
	var open []models.PaymentAttempt
	for _, a := range m.w.attempts() {
		if a.Status == models.AttemptOpen {
			open = append(open, a)
		}
	}
	if len(open) == 0 {
		t.Skip("no open attempt to resend")
	}
	a := open[ints(0, len(open)-1).Draw(t, "attempt_index")]
	lead := faults.Fault{Kind: faults.KindSlowPastTotal, Delay: faults.SlowPastTotalDelay}
	card := m.w.cardOf(a)
	if m.w.cfg.Instances > 1 && ints(0, 1).Draw(t, "job_reads_first") == 1 {
		m.resendAfterRead(a, card, append([]faults.Fault{{Kind: faults.KindPass}, lead}, m.drawFaults(t)...))
		return
	}
	gap := time.Duration(ints(1, 9000).Draw(t, "gap_ms"))*time.Millisecond + gapOffset
	fs := append([]faults.Fault{lead}, m.drawFaults(t)...)
	m.stepWith("reconcile-during-checkout", fmt.Sprintf("order %d with %s after the job was down %v, the job %v into the resend", a.OrderID, card, raceDowntime, gap), fs)
	m.w.advance(raceDowntime)
	o := m.w.order(a.OrderID)
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.w.checkout(m.w.cli, "shopper", o, card)
	}()
	m.w.pause(gap)
	m.w.reconcile("reconciler")
	<-done
	m.w.lastCard[a.OrderID] = card
}

// resendAfterRead is reconcile-during-checkout in the other order, drawn
// only with several client instances: after the job was down
// raceDowntime, the reconciliation job of instance 0 reads the Open
// attempts and looks up the first one's charges, and at its first settle
// point (client.PointBeforeSettle), between its read and its write, the
// shopper retries a's order with card on instance 1, resending a's key.
// fs is the step's schedule: the drawn one puts the lookup's pass first and
// slow processing past the client's total timeout second, on the resend,
// so that its charge lands after the job wrote what it decided, whichever
// of the attempts the job checks first. A job whose abandon does not
// re-check the row (still Open, not resent since its read) overwrites the
// resent attempt and leaves the charge on an abandoned attempt
// (books-balance): the shape seed article 000 warns about once several
// instances share a store (pg-unconditional-settle), reached within the
// default 100 checks (issue 28).
func (m *Machine) resendAfterRead(a models.PaymentAttempt, card string, fs []faults.Fault) {
	w := m.w
	m.stepWith("reconcile-during-checkout", fmt.Sprintf("order %d with %s after the job was down %v, resent%s between the job's read and its write", a.OrderID, card, raceDowntime, w.onInstance(1)), fs)
	w.advance(raceDowntime)
	o := w.order(a.OrderID)
	w.points.arm(client.PointBeforeSettle, func() { w.checkout(w.instance(1), "shopper", o, card) })
	w.reconcile("reconciler")
	w.points.disarm(client.PointBeforeSettle)
	w.lastCard[a.OrderID] = card
}
