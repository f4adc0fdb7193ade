package machine

import (
	"sync"
	"time"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/client"
	"pgregory.net/rapid"
)

// drawInstance picks the client instance a shopper's request lands on; 0
// without a draw when there is one instance (so single-instance runs draw
// what they always drew).
func (m *Machine) drawInstance(t *rapid.T) int {
	if m.w.cfg.Instances == 1 {
		return 0
	}
	return ints(0, m.w.cfg.Instances-1).Draw(t, "instance")
}

// onInstance is the step-argument suffix naming instance i, "" for 0.
func (w *World) onInstance(i int) string {
	if i == 0 {
		return ""
	}
	return " on " + instanceName(i, w.cfg.Instances)
}

// race is what a reconciliation run meets between its read and its write
// (client.PointBeforeSettle of the first attempt it checks).
type race int

const (
	raceNone     race = iota // the reconciler runs alone
	raceReconcil             // a second reconciler, on another instance, runs to its end
	raceResend               // the shopper resends the attempt's key on another instance
)

func (r race) String() string {
	return [...]string{"", "after the job was down 31m0s, a second reconciler runs between its read and its write",
		"after the job was down 31m0s, the shopper resends the key between its read and its write"}[r]
}

// raceDowntime is how long the job was down before a raced run: past
// AbandonAfter (30 min), so the run has attempts to abandon, which is where
// a write that does not re-check the row goes wrong.
const raceDowntime = 31 * time.Minute

// drawRace draws a reconciliation's race: none without a draw when there
// is one instance.
func (m *Machine) drawRace(t *rapid.T) race {
	if m.w.cfg.Instances == 1 {
		return raceNone
	}
	return race(ints(0, 2).Draw(t, "race"))
}

// raceReconciliation runs the reconciliation job of instance 0 with r
// forced in at its first settle point: a forced interleaving, the same on
// every replay.
func (m *Machine) raceReconciliation(r race) {
	w := m.w
	if r != raceNone {
		w.advance(raceDowntime)
	}
	switch r {
	case raceReconcil:
		w.points.arm(client.PointBeforeSettle, func() { w.reconcileOn(1, "reconciler 2") })
	case raceResend:
		w.points.arm(client.PointBeforeSettle, func() { w.resendOldest(1) })
	}
	w.reconcile("reconciler")
	w.points.disarm(client.PointBeforeSettle)
}

// reconcileOn runs the reconciliation job of instance i once, as actor.
func (w *World) reconcileOn(i int, actor string) string {
	saved := w.cli
	w.cli = w.instance(i)
	defer func() { w.cli = saved }()
	return w.reconcile(actor)
}

// resendOldest is the shopper retrying, on instance i, the order of the
// oldest open attempt with its card: the request resends the attempt's key.
func (w *World) resendOldest(i int) {
	for _, a := range w.attempts() {
		if a.Status != models.AttemptOpen {
			continue
		}
		for _, card := range cardLabels {
			if models.CardHash(cards[card]) == a.CardTokenHash {
				w.checkout(w.instance(i), "shopper", w.order(a.OrderID), card)
				w.lastCard[a.OrderID] = card
				return
			}
		}
	}
}

// crashAtPoint runs a checkout of o with card on instance 0 and kills the
// client when it reaches point p — or right after the call, when it never
// does (the order was paid, another intent is open) — then restarts it
// from the store. The lost call's result is never seen by the shopper.
func (m *Machine) crashAtPoint(o models.Order, card string, p client.Point) {
	w, cli := m.w, m.w.cli.(*refClient)
	var c pointCrash
	crash := func() {
		c.once.Do(func() {
			c.at = w.clock.Now()
			c.op = w.hist.BeginOp(models.Operation{Actor: "operator", Kind: models.OpCrash, Detail: string(p), InvokedAt: c.at})
			cli.crash()
		})
	}
	w.points.arm(p, crash)
	w.checkout(cli, "shopper", o, card)
	w.points.disarm(p)
	crash() // a no-op when the point was reached
	w.restart()
	w.hist.EndOp(m.lastCheckoutOp(), func(op *models.Operation) {
		if !op.ReturnedAt.Before(c.at) {
			op.Lost = true
		}
	})
	w.hist.EndOp(c.op, func(op *models.Operation) { op.Returned, op.ReturnedAt = true, w.clock.Now() })
}

// pointCrash is one crash at a point: when, and its operation.
type pointCrash struct {
	once sync.Once // runs the crash, from the point or after the call
	at   time.Time
	op   int
}
