package machine

import (
	"fmt"
	"time"

	"github.com/idemcheck/idemcheck/internal/stackgrow"
	"github.com/idemcheck/idemcheck/models"
	"pgregory.net/rapid"
)

// secondClicks are what the later click of a double click may carry under
// the first click's key.
var secondClicks = []string{"another amount", "another card"}

// inflightActions adds changed-second-click (a double click whose second
// click carries another amount or card) to actions when providerDraws
// holds. Its name sorts before "checkout" on purpose: rapid's Repeat
// draws actions by their sorted index and shrinks that index toward 0, so
// a counterexample "checkout, then probe the key with another body" can
// shrink into this one step (the 2-step minimum of errors-not-problem-details,
// measured: 1 of 5 matrix seeds reached it under the old name, which
// sorts after checkout).
func (m *Machine) inflightActions(actions map[string]func(*rapid.T)) {
	if m.providerDraws() {
		actions["changed-second-click"] = m.doubleClickMismatch
	}
}

// providerDraws reports whether the run draws the provider-side requests
// of in-flight mismatches and declined-key probes: in virtual time with one
// client instance, the default. In real time (Redis, loopback, remote) a
// gap cannot place the second click inside the first's processing (the
// certification's inflight-mismatch-refused and declined-key-never-charges
// hold them together instead); a run of several client instances is about
// the client's own races. Those runs draw the same sequences as before.
func (m *Machine) providerDraws() bool { return !m.w.real && m.w.cfg.Instances <= 1 }

// doubleClickMismatch is a double click whose later click carries another
// amount or card while the first is still in flight: the first click is
// the shopper's checkout; gap later (1–40 ms, inside the provider's 50 ms
// processing time) the harness sends, outside the client, a POST under the
// key the client stored for that intent with the other body. The
// specification allows 409 or 422 for it, never a charge (models.Spec;
// the reference client itself never sends one key with two bodies).
// replay-consistent judges it: processing a request under a key in flight,
// whatever its body, is the missing in-flight lock.
func (m *Machine) doubleClickMismatch(t *rapid.T) {
	o := m.drawOrder(t)
	card := cardGen.Draw(t, "card")
	second := secondClickGen.Draw(t, "second_click")
	gap := time.Duration(ints(1, 40).Draw(t, "gap_ms"))*time.Millisecond + gapOffset
	m.stepWith("changed-second-click", fmt.Sprintf("order %d with %s, then %s %v later", o.ID, card, second, gap), m.drawFaults(t))
	done := make(chan struct{})
	start := m.w.clock.Now()
	go func() {
		stackgrow.To(stackgrow.Check)
		defer close(done)
		m.w.checkout(m.w.cli, "click 1", o, card)
	}()
	m.w.pause(gap)
	if a, ok := m.w.openAttemptOf(o.ID); ok && m.w.keyHeld(a.IdempotencyKey, start) {
		body, copied := m.w.recordedBody(a.IdempotencyKey) // the client's own body (recorded.go)
		if !copied {
			<-done
			m.w.lastCard[o.ID] = card
			return
		}
		if second == "another amount" {
			body.Amount++
		} else {
			body.Source = cards[otherCard(card)]
		}
		m.w.send("click 2", o.ID, card, m.w.keyHeader(a.IdempotencyKey), body, "")
	}
	<-done
	m.w.lastCard[o.ID] = card
}

// heldAtProvider reports whether a request under key sent at or after
// since (by this step's first click) has reached the provider and not been
// answered with a 5xx (which frees the key): the key is then in flight or
// completed there, so another body under it is a mismatch. A first click
// held up by a fault (dropped, delayed, answered by the fault layer), or
// one that sent nothing (the reference client reconciles an attempt near
// the retention window first), leaves no such request, and the second
// click is not sent: an older request's key may be one the provider has
// rightly forgotten (its retention window passed), and under a free key
// the other body would rightly be processed.
func heldAtProvider(exchanges []models.Exchange, key string, since time.Time) bool {
	for _, e := range exchanges {
		if e.Key == key && e.IsPost() && !e.SentAt.Before(since) && e.ArrivalSeq > 0 && (!e.ProviderDone || e.ProviderStatus < 500) {
			return true
		}
	}
	return false
}

// openAttemptOf is the Open payment attempt of order, if the client holds
// one (the reference client stores it before its first send).
func (w *World) openAttemptOf(order int64) (models.PaymentAttempt, bool) {
	for _, a := range w.attempts() {
		if a.OrderID == order && a.Status == models.AttemptOpen {
			return a, true
		}
	}
	return models.PaymentAttempt{}, false
}
