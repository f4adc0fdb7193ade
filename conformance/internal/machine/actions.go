package machine

import (
	"fmt"
	"time"

	"github.com/idemcheck/idemcheck/checkout"
	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/internal/stackgrow"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/client"
	"pgregory.net/rapid"
)

// jobSurely is how long a time-passes step must be for the scheduled
// reconciliation job to have surely run in it.
const jobSurely = 12 * time.Hour

// gapOffset keeps concurrent starts off whole milliseconds, where the
// provider's processing time, retry delays and Retry-After land, so that
// no two goroutines wake at the same virtual instant and a drawn sequence
// replays in one order.
const gapOffset = 37 * time.Microsecond

// advanceSteps are the amounts of time an advance-time step can let pass:
// around the retry delay, the timeouts, MinAge, and AbandonAfter. rapid
// shrinks toward the first, so it comes first: 3 minutes outlasts MinAge
// (2 min) and the timeouts, so one step of it does what several shorter
// ones would, and a shrunk sequence needs fewer steps.
//
// 22 hours comes last: it lets a probe reach a key late in the provider's
// published 24 h retention window, where a provider that forgets keys early
// is caught.
// A step of 31 minutes or 22 h may instead be 25 h with the
// reconciliation job down all through it (drawJobDown), which outlasts the window in one step: an
// attempt left Open then holds a key the provider has forgotten
// (no-stale-key).
var advanceSteps = []time.Duration{3 * time.Minute, time.Second, 31 * time.Minute, 10 * time.Second, time.Minute, 22 * time.Hour}

// Actions is the rapid state machine over what shoppers and operators do.
// rapid draws action names in sorted order with a bias toward the first and
// shrinks toward the first, so the plainest action, "checkout", sorts first.
// Each action draws its arguments first, then records a step, then acts:
// nothing is drawn once goroutines run.
func (m *Machine) Actions() map[string]func(*rapid.T) {
	actions := map[string]func(*rapid.T){
		"open-order":            m.openOrder,
		"checkout":              m.checkout,
		"double-click":          m.doubleClick,
		"time-passes":           m.advanceTime,
		"reconcile":             m.reconcile,
		"crash-restart":         m.crashRestart,
		"crash-during-checkout": m.crashDuringCheckout,
		"heal-faults":           m.heal,
		"probe-stored-key":      m.probe,
		"payment-ready-race":    m.callbackRace,
		"refund":                m.refund, // actions_refund.go
	}
	m.inflightActions(actions)
	if !m.w.real { // actions_overlap.go: in virtual time, where the overlap is placed exactly
		actions["reconcile-during-checkout"] = m.resendDuringReconcile
	}
	for name, a := range actions {
		actions[name] = m.live(a)
	}
	actions[""] = m.check
	return actions
}

func (m *Machine) openOrder(t *rapid.T) {
	if len(m.w.orders) >= m.w.cfg.MaxOrders {
		t.Skip("enough orders")
	}
	total := int64(ints(100, 99999).Draw(t, "total"))
	currency := currencyGen.Draw(t, "currency")
	args := fmt.Sprintf("total=%d %s", total, currency)
	// Drawn in virtual time only: the real-time runs (Redis, WireMock, a
	// URL) keep the draws they had before (redis-lease-too-short survived
	// the matrix's seed 1 with this draw made there too).
	lag := faults.Fault{Kind: faults.KindPass}
	if len(m.w.orders) == 0 && !m.w.real {
		shape := ints(0, 3).Draw(t, "key_shape")
		if shape == 3 {
			// A quarter of the sequences: a busy UUIDv7 client's keys
			// (keySource.SetBusy), from the first order on.
			m.w.keys.SetBusy()
			args += "; keys of a busy UUIDv7 client (one prefix, a counter)"
		}
		if m.w.lagsLookups() {
			// Five in eight: an eventually consistent provider, from the
			// first order on, from the same draws (faults.LookupLagFor).
			if lag = faults.LookupLagFor(shape, total); lag.Kind == faults.KindLookupLag {
				args += "; the provider's lookups lag " + lag.Delay.String() + " (" + string(lag.Kind) + ")"
			}
		}
	}
	m.step("open-order", args)
	m.w.faults.LagLookups(lag)
	m.w.openOrder("shopper", total, currency)
}

// lagsLookups reports whether the sequence may draw a lookup lag
// (faults.LookupLagFor): in virtual time only, as key_shape, and for a
// client under test only when its abandon horizon exceeds the longest lag
// plus the longest processing time (the contract in
// faults/lookup_lag.go). The reference client, mutated or not, always:
// its horizon is 30 min.
func (w *World) lagsLookups() bool {
	if w.real {
		return false
	}
	return w.cfg.Under == nil || w.ccfg.AbandonAfter > faults.MaxLookupLag+faults.SlowPastTotalDelay
}

// drawOrder picks an order that is not Paid yet, skipping the action when
// there is none (checking out a paid order sends nothing; retry-same-card
// still covers it).
func (m *Machine) drawOrder(t *rapid.T) models.Order {
	o, ok := m.drawOrderOrNone(t)
	if !ok {
		t.Skip("no unpaid order")
	}
	return o
}

// drawOrderOrNone is drawOrder that, against a URL, does not skip when
// there are orders but every one is paid: it draws an order index as if
// one were unpaid and returns false, and the caller draws the rest of its
// arguments and does nothing (no step, nothing sent). Such a step then
// takes as many of rapid's draws as the step it stands for, and the steps
// after it keep theirs: against a URL, where a shrink attempt costs real
// time, rapid can make an earlier step pay the order (drop its fault)
// without the later steps, now drawn from other positions, turning into
// other steps (a shrink of mismatch-rejected stopped at 5 steps for 3).
// It is not a skip: rapid counts a skip after draws as a rejected step
// and ends a sequence after a few. With no order at all it skips at once,
// as it does in process, where nothing changed (the mutant matrix's
// minima were measured so).
func (m *Machine) drawOrderOrNone(t *rapid.T) (models.Order, bool) {
	var unpaid []models.Order
	m.w.eachOrderState(func(i int, s models.Order) {
		if s.Status != models.OrderPaid {
			unpaid = append(unpaid, m.w.orders[i])
		}
	})
	if len(unpaid) == 0 {
		if !m.w.cfg.IsRemote() || len(m.w.orders) == 0 {
			t.Skip("no unpaid order")
		}
		_ = ints(0, 0).Draw(t, "order_index")
		return models.Order{}, false
	}
	// An index, not the order: rapid logs what is drawn.
	return unpaid[ints(0, len(unpaid)-1).Draw(t, "order_index")], true
}

// checkout is the shopper paying for an unpaid order with a card. It is
// one action, named in the history after how the card relates to the
// order's last one — "checkout" (first try), "retry-same-card" or
// "another-card" — so that shrinking may turn one kind into another.
func (m *Machine) checkout(t *rapid.T) {
	o, ok := m.drawOrderOrNone(t)
	card := cardGen.Draw(t, "card")
	if !ok { // against a URL, every order paid: a checkout's draws, and nothing done
		_ = m.drawInstance(t)
		_ = m.drawFaults(t)
		return
	}
	name, args := "checkout", fmt.Sprintf("order %d with %s", o.ID, card)
	if last, ok := m.w.lastCard[o.ID]; ok && last == card {
		name = "retry-same-card"
	} else if ok {
		name, args = "another-card", fmt.Sprintf("order %d with %s (was %s)", o.ID, card, last)
	}
	inst := m.drawInstance(t)
	m.stepWith(name, args+m.w.onInstance(inst), m.drawFaults(t))
	m.w.checkout(m.w.instance(inst), "shopper", o, card)
	m.w.lastCard[o.ID] = card
}

// doubleClick fans out 2–4 concurrent checkouts of one order, started gap
// apart in virtual time so the interleaving is the same on every replay;
// results come back over a channel.
func (m *Machine) doubleClick(t *rapid.T) {
	o := m.drawOrder(t)
	card := cardGen.Draw(t, "card")
	n := ints(2, 4).Draw(t, "clicks")
	gap := time.Duration(ints(1, 300).Draw(t, "gap_ms"))*time.Millisecond + gapOffset
	m.stepWith("double-click", fmt.Sprintf("order %d with %s, %d clicks %v apart", o.ID, card, n, gap), m.drawFaults(t))
	done := make(chan checkout.Result, n)
	for i := 0; i < n; i++ {
		cli := m.w.instance(i % m.w.cfg.Instances) // behind a load balancer, clicks land on the instances in turn
		go func(i int) {
			stackgrow.To(stackgrow.Check)
			m.w.pause(time.Duration(i) * gap) // this click starts i gaps later
			done <- m.w.checkout(cli, fmt.Sprintf("click %d", i+1), o, card)
		}(i)
	}
	for i := 0; i < n; i++ {
		<-done
	}
	m.w.lastCard[o.ID] = card
}

// callbackRace is the shopper's checkout racing the "payment ready"
// callback path of the same order (a webhook or redirect handler), the
// callback starting gap later in virtual time.
func (m *Machine) callbackRace(t *rapid.T) {
	o := m.drawOrder(t)
	// The provider calls back for a payment it approved: approving cards only.
	card := approvedCardGen.Draw(t, "card")
	gap := time.Duration(ints(1, 2000).Draw(t, "gap_ms"))*time.Millisecond + gapOffset
	m.stepWith("payment-ready-race", fmt.Sprintf("order %d with %s, callback %v later", o.ID, card, gap), m.drawFaults(t))
	cli, other := m.w.cli, m.w.instance(1%m.w.cfg.Instances) // the callback may reach another instance
	done := make(chan struct{}, 2)
	go func() {
		stackgrow.To(stackgrow.Check)
		m.w.checkout(cli, "shopper", o, card)
		done <- struct{}{}
	}()
	go func() {
		stackgrow.To(stackgrow.Check)
		m.w.pause(gap)
		m.w.callback(other, o, card)
		done <- struct{}{}
	}()
	<-done
	<-done
	m.w.lastCard[o.ID] = card
}

// advanceTime lets time pass. Shorter steps leave the reconciliation job
// to the "reconcile" action, so that a job that was late for a while is in
// play; when half a day or more passes, the job runs once at the end,
// unless it was down all along (drawJobDown): then an attempt left Open
// may outlive the provider's retention window, and the client must not
// resend its forgotten key (no-stale-key).
func (m *Machine) advanceTime(t *rapid.T) {
	d := advanceGen.Draw(t, "by")
	down := d >= jobDownFrom && drawJobDown(t)
	args := d.String()
	if down {
		d = jobDownStep
		args = d.String() + ", reconciliation job down"
	}
	m.step("time-passes", args)
	m.w.advance(d)
	if d >= jobSurely && !down {
		m.w.reconcile("reconciler (scheduled)")
	}
}

func (m *Machine) reconcile(t *rapid.T) {
	race := m.drawRace(t)
	m.stepWith("reconcile", race.String(), m.drawFaults(t))
	m.raceReconciliation(race)
}

func (m *Machine) crashRestart(t *rapid.T) {
	m.needRestart(t)
	m.step("crash-restart", "")
	id := m.w.hist.BeginOp(models.Operation{Actor: "operator", Kind: models.OpCrash, InvokedAt: m.w.clock.Now()})
	m.w.restart()
	m.w.hist.EndOp(id, func(op *models.Operation) { op.Returned, op.ReturnedAt = true, m.w.clock.Now() })
}

// crashDuringCheckout starts a checkout and kills the client process after
// a drawn time, while its request may be out; the restarted client keeps
// the store. The lost call's result is never seen by the shopper.
func (m *Machine) crashDuringCheckout(t *rapid.T) {
	m.needRestart(t)
	o := m.drawOrder(t)
	card := cardGen.Draw(t, "card")
	after := time.Duration(ints(1, 12000).Draw(t, "crash_after_ms"))*time.Millisecond + 171*time.Microsecond
	// Then the shopper, who saw an error page, pays again once the service
	// is back with the i-th card, or (i = len(cardLabels)) does not. Paying
	// again comes first so that shrinking keeps a crash and the shopper's
	// next move in one step.
	again := ints(0, len(cardLabels)).Draw(t, "then_pays_with")
	// 0: after crash_after_ms; i: at the i-th crash point of the checkout.
	// Drawn last, so that shrinking keeps the timed crash unless a point
	// matters.
	at := 0
	if _, ok := m.w.cli.(*refClient); ok { // crash points are the reference client's
		at = ints(0, len(client.CheckoutPoints)).Draw(t, "crash_at")
	}
	args := fmt.Sprintf("order %d with %s, crash after %v", o.ID, card, after)
	if at > 0 {
		args = fmt.Sprintf("order %d with %s, crash at %s", o.ID, card, client.CheckoutPoints[at-1])
	}
	if again < len(cardLabels) {
		args += ", then the shopper pays again with " + cardLabels[again]
	}
	m.stepWith("crash-during-checkout", args, m.drawFaults(t))
	if at > 0 {
		m.crashAtPoint(o, card, client.CheckoutPoints[at-1])
	} else {
		m.crashAfter(o, card, after)
	}
	m.w.lastCard[o.ID] = card
	if again < len(cardLabels) {
		m.w.checkout(m.w.cli, "shopper", o, cardLabels[again])
		m.w.lastCard[o.ID] = cardLabels[again]
	}
}

// crashAfter starts a checkout of o with card and kills the client after
// the given time, then restarts it.
func (m *Machine) crashAfter(o models.Order, card string, after time.Duration) {
	cli := m.w.cli
	done := make(chan struct{}, 1)
	go func() {
		stackgrow.To(stackgrow.Check)
		m.w.checkout(cli, "shopper", o, card)
		done <- struct{}{}
	}()
	m.w.pause(after)
	crashAt := m.w.clock.Now()
	crash := m.w.hist.BeginOp(models.Operation{Actor: "operator", Kind: models.OpCrash, InvokedAt: crashAt})
	m.w.restart()
	<-done
	m.w.hist.EndOp(m.lastCheckoutOp(), func(op *models.Operation) {
		// The call may have finished before the crash; if it ended at or
		// after the crash, the shopper never saw its answer.
		if !op.ReturnedAt.Before(crashAt) {
			op.Lost = true
		}
	})
	m.w.hist.EndOp(crash, func(op *models.Operation) { op.Returned, op.ReturnedAt = true, m.w.clock.Now() })
}

// lastCheckoutOp is the id of the most recent checkout operation.
func (m *Machine) lastCheckoutOp() int { return m.w.hist.LastOp(models.OpCheckout) }

// heal ends all faults for the rest of the sequence; it is drawn only once
// a fault has hit, so that most sequences meet their schedules.
func (m *Machine) heal(t *rapid.T) {
	if len(m.w.faults.Injected()) == 0 {
		t.Skip("no fault injected yet")
	}
	m.step("heal-faults", "")
	id := m.w.hist.BeginOp(models.Operation{Actor: "operator", Kind: models.OpHeal, InvokedAt: m.w.clock.Now()})
	m.w.faults.Heal()
	m.w.hist.EndOp(id, func(op *models.Operation) { op.Returned, op.ReturnedAt = true, m.w.clock.Now() })
}
