package conformance

import (
	"fmt"
	"time"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/client"
	"pgregory.net/rapid"
)

// advanceSteps are the amounts of time an advance-time step can let pass:
// around the retry delay, the timeouts, MinAge, and AbandonAfter.
var advanceSteps = []time.Duration{time.Second, 10 * time.Second, time.Minute, 3 * time.Minute, 31 * time.Minute}

// actions is the rapid state machine over what shoppers and operators do.
// Each action draws its arguments first, then records a step, then acts:
// nothing is drawn once goroutines run.
func (m *machine) actions() map[string]func(*rapid.T) {
	return map[string]func(*rapid.T){
		"":                      m.check,
		"open-order":            m.openOrder,
		"checkout":              m.checkout,
		"retry-same-card":       m.retrySameCard,
		"another-card":          m.anotherCard,
		"double-click":          m.doubleClick,
		"advance-time":          m.advanceTime,
		"reconcile":             m.reconcile,
		"crash-restart":         m.crashRestart,
		"crash-during-checkout": m.crashDuringCheckout,
		"heal-faults":           m.heal,
		"probe-stored-key":      m.probe,
	}
}

func (m *machine) openOrder(t *rapid.T) {
	if len(m.w.orders) >= m.w.cfg.MaxOrders {
		t.Skip("enough orders")
	}
	total := int64(rapid.IntRange(100, 99999).Draw(t, "total"))
	currency := rapid.SampledFrom([]string{"TRY", "EUR", "USD"}).Draw(t, "currency")
	m.step("open-order", fmt.Sprintf("total=%d %s", total, currency))
	m.w.openOrder("shopper", total, currency)
}

// drawOrder picks an order that is not Paid yet, skipping the action when
// there is none (checking out a paid order sends nothing; retry-same-card
// still covers it).
func (m *machine) drawOrder(t *rapid.T) models.Order {
	var unpaid []models.Order
	for _, o := range m.w.orders {
		if m.w.order(o.ID).Status != models.OrderPaid {
			unpaid = append(unpaid, o)
		}
	}
	if len(unpaid) == 0 {
		t.Skip("no unpaid order")
	}
	return rapid.SampledFrom(unpaid).Draw(t, "order")
}

func (m *machine) checkout(t *rapid.T) {
	o := m.drawOrder(t)
	card := rapid.SampledFrom(cardLabels).Draw(t, "card")
	m.step("checkout", fmt.Sprintf("order %d with %s", o.ID, card))
	m.w.checkout(m.w.cli, "shopper", o, card)
	m.w.lastCard[o.ID] = card
}

func (m *machine) retrySameCard(t *rapid.T) {
	if len(m.w.orders) == 0 {
		t.Skip("no order yet")
	}
	o := rapid.SampledFrom(m.w.orders).Draw(t, "order")
	card, ok := m.w.lastCard[o.ID]
	if !ok {
		t.Skip("no earlier checkout of this order")
	}
	m.step("retry-same-card", fmt.Sprintf("order %d with %s", o.ID, card))
	m.w.checkout(m.w.cli, "shopper", o, card)
}

func (m *machine) anotherCard(t *rapid.T) {
	o := m.drawOrder(t)
	last, ok := m.w.lastCard[o.ID]
	if !ok {
		t.Skip("no earlier checkout of this order")
	}
	var others []string
	for _, c := range cardLabels {
		if c != last {
			others = append(others, c)
		}
	}
	card := rapid.SampledFrom(others).Draw(t, "card")
	m.step("another-card", fmt.Sprintf("order %d with %s (was %s)", o.ID, card, last))
	m.w.checkout(m.w.cli, "shopper", o, card)
	m.w.lastCard[o.ID] = card
}

// doubleClick fans out 2–4 concurrent checkouts of one order, started gap
// apart in virtual time so the interleaving is the same on every replay;
// results come back over a channel.
func (m *machine) doubleClick(t *rapid.T) {
	o := m.drawOrder(t)
	card := rapid.SampledFrom(cardLabels).Draw(t, "card")
	n := rapid.IntRange(2, 4).Draw(t, "clicks")
	gap := time.Duration(rapid.IntRange(1, 2000).Draw(t, "gap_ms")) * time.Millisecond
	m.step("double-click", fmt.Sprintf("order %d with %s, %d clicks %v apart", o.ID, card, n, gap))
	cli := m.w.cli
	done := make(chan client.CheckoutResult, n)
	for i := 0; i < n; i++ {
		go func(i int) {
			m.w.clock.Advance(time.Duration(i) * gap) // this click starts i gaps later
			done <- m.w.checkout(cli, fmt.Sprintf("click %d", i+1), o, card)
		}(i)
	}
	for i := 0; i < n; i++ {
		<-done
	}
	m.w.lastCard[o.ID] = card
}

func (m *machine) advanceTime(t *rapid.T) {
	d := rapid.SampledFrom(advanceSteps).Draw(t, "by")
	m.step("advance-time", d.String())
	id := m.w.hist.BeginOp(models.Operation{Actor: "clock", Kind: models.OpAdvance, Detail: d.String(), InvokedAt: m.w.clock.Now()})
	m.w.clock.Advance(d)
	m.w.hist.EndOp(id, func(op *models.Operation) { op.Returned, op.ReturnedAt = true, m.w.clock.Now() })
}

func (m *machine) reconcile(*rapid.T) {
	m.step("reconcile", "")
	m.w.reconcile("reconciler")
}

func (m *machine) crashRestart(*rapid.T) {
	m.step("crash-restart", "")
	id := m.w.hist.BeginOp(models.Operation{Actor: "operator", Kind: models.OpCrash, InvokedAt: m.w.clock.Now()})
	m.w.restart()
	m.w.hist.EndOp(id, func(op *models.Operation) { op.Returned, op.ReturnedAt = true, m.w.clock.Now() })
}

// crashDuringCheckout starts a checkout and kills the client process after
// a drawn time, while its request may be out; the restarted client keeps
// the store. The lost call's result is never seen by the shopper.
func (m *machine) crashDuringCheckout(t *rapid.T) {
	o := m.drawOrder(t)
	card := rapid.SampledFrom(cardLabels).Draw(t, "card")
	after := time.Duration(rapid.IntRange(1, 12000).Draw(t, "crash_after_ms"))*time.Millisecond + 171*time.Microsecond
	m.step("crash-during-checkout", fmt.Sprintf("order %d with %s, crash after %v", o.ID, card, after))
	cli := m.w.cli
	done := make(chan int, 1)
	go func() {
		id := m.w.hist.BeginOp(models.Operation{
			Actor: "shopper", Kind: models.OpCheckout, OrderID: o.ID, Card: card,
			Amount: o.Total, Currency: o.Currency, InvokedAt: m.w.clock.Now(),
		})
		res := cli.Checkout(models.WithOp(contextBackground(), id), o.ID, cards[card])
		m.w.hist.EndOp(id, func(op *models.Operation) {
			op.ReturnedAt, op.Returned = m.w.clock.Now(), true
			op.Result, op.HTTPStatus = string(res.Outcome), res.HTTPStatus
		})
		done <- id
	}()
	m.w.clock.Advance(after)
	crash := m.w.hist.BeginOp(models.Operation{Actor: "operator", Kind: models.OpCrash, InvokedAt: m.w.clock.Now()})
	m.w.restart()
	id := <-done
	m.w.hist.EndOp(id, func(op *models.Operation) {
		// The call may have finished before the crash; if it ended at or
		// after the crash, the shopper never saw its answer.
		if !op.ReturnedAt.Before(m.w.clock.Now()) {
			op.Lost = true
		}
	})
	m.w.hist.EndOp(crash, func(op *models.Operation) { op.Returned, op.ReturnedAt = true, m.w.clock.Now() })
	m.w.lastCard[o.ID] = card
}

// heal ends the fault schedule; it is drawn only once a fault has hit,
// so that most sequences meet their schedule.
func (m *machine) heal(t *rapid.T) {
	if len(m.w.faults.Injected()) == 0 {
		t.Skip("no fault injected yet")
	}
	m.step("heal-faults", "")
	id := m.w.hist.BeginOp(models.Operation{Actor: "operator", Kind: models.OpHeal, InvokedAt: m.w.clock.Now()})
	m.w.faults.Heal()
	m.w.hist.EndOp(id, func(op *models.Operation) { op.Returned, op.ReturnedAt = true, m.w.clock.Now() })
}
