package check

import (
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/models"
)

// checkAtMostOneCharge: the provider never holds two successful charges
// for one order.
func checkAtMostOneCharge(w World) Finding {
	byOrder := map[int64][]string{}
	var orders []int64
	for _, c := range w.Charges {
		if c.Status != "succeeded" {
			continue
		}
		o := orderOf(c.MerchantReference)
		if _, ok := byOrder[o]; !ok {
			orders = append(orders, o)
		}
		byOrder[o] = append(byOrder[o], c.ID)
	}
	for _, o := range orders {
		if ids := byOrder[o]; len(ids) > 1 {
			return Violation(AtMostOneChargePerOrder, "the provider holds %d charges for order %d (%s)", len(ids), o, strings.Join(ids, ", "))
		}
	}
	return Finding{}
}

// specVerdict is the specification's judgement of one provider answer.
type specVerdict struct {
	ex     models.Exchange
	expect models.Expect
	// first is the answer that completed the key first ("201 ch_000001"),
	// for messages about replays, and firstHeaders its meaningful headers.
	first        string
	firstHeaders models.ResponseHeaders
}

// replaySpec runs the provider's recorded decisions — arrivals and commits,
// in the order the history saw them — through models.Spec and returns, for
// every completed POST, what the specification allowed.
func replaySpec(w World) []specVerdict {
	m := w.m()
	if !m.done[2] {
		m.verdicts, m.done[2] = runSpec(w), true
	}
	return m.verdicts
}

func runSpec(w World) []specVerdict {
	spec := models.NewSequentialSpec(w.Retention)
	expects := map[int]models.Expect{}
	first := map[string]string{}
	firstHeaders := map[string]models.ResponseHeaders{}
	var out []specVerdict
	for _, ev := range models.ProviderEvents(postsOf(w)) {
		e := ev.Ex
		if ev.Arrival {
			var x models.Expect
			if w.Killable && e.ProviderDone && e.ProviderStatus != 409 && e.ProviderStatus < 500 {
				spec = spec.Forget(e.Key, e.ArrivedAt) // a dead holder's key, freed early
			}
			spec, x = spec.Arrive(e.Key, e.HasKey, e.Fingerprint, e.ArrivedAt)
			expects[e.ID] = x
			continue
		}
		x := expects[e.ID]
		switch {
		case x.Kind == models.ExpectProcess && w.Killable && e.Fault == faultProviderCrash:
			// its provider process died holding the key: nothing stored,
			// in flight until the lock's lease ends, which the harness
			// waits out before time jumps
			spec = spec.Abandon(e.Key, nextJump(w, e.ArrivedAt), e.ProviderDoneAt)
		case x.Kind == models.ExpectProcess:
			spec = spec.Complete(e.Key, e.ProviderStatus, e.ProviderBodyDigest, e.ProviderDoneAt)
			if e.ProviderStatus < 500 {
				first[e.Key], firstHeaders[e.Key] = answer(*e), e.ProviderHeaders
			}
		}
		out = append(out, specVerdict{ex: *e, expect: x, first: first[e.Key], firstHeaders: firstHeaders[e.Key]})
	}
	return out
}

// checkReplayConsistent: a completed key answers with the first response's
// status and body (same charge id); a key in flight answers 409 (draft §2.6;
// seed article 004, "Response content'i de kaydet").
func checkReplayConsistent(w World) Finding {
	if f := replayVerdicts(w, replaySpec(w)); !f.Holds() {
		return f
	}
	return checkDeclinesRunOnce(w)
}

// replayVerdicts is replay-consistent's answer half over verdicts vs.
func replayVerdicts(w World, vs []specVerdict) Finding {
	n := newNames(w)
	for _, v := range vs {
		e, x := v.ex, v.expect
		ref := e.MerchantReference // named only in a violation
		if refusedStoreDown(e) {
			continue
		}
		switch x.Kind {
		case models.ExpectReplay:
			if !x.Matches(e.ProviderStatus, e.ProviderBodyDigest) {
				return Violation(ReplayConsistent, "%s: a retry of a completed key was answered %s, not the first response (%s)", n.of(ref), answer(e), v.first)
			}
			if d := v.firstHeaders.ReplayDiffers(e.ProviderHeaders); d != "" {
				return Violation(ReplayConsistent, "%s: the replay of %s changed a header of the first response (%s)", n.of(ref), v.first, d)
			}
		case models.ExpectConflict:
			if !x.Matches(e.ProviderStatus, e.ProviderBodyDigest) {
				return Violation(ReplayConsistent, "%s: a retry while the key was in flight was answered %s, not 409", n.of(ref), answer(e))
			}
		case models.ExpectMismatch:
			if x.InFlight && !x.Matches(e.ProviderStatus, e.ProviderBodyDigest) {
				return Violation(ReplayConsistent, "%s: another body under the key while it was in flight was answered %s, not 409 or 422", n.of(ref), answer(e))
			}
		case models.ExpectProcess:
			if e.ProviderStatus == 409 {
				return Violation(ReplayConsistent, "%s: a key no request was processing was answered 409", n.of(ref))
			}
			if e.ProviderStatus == 422 {
				// A key the provider never saw, answered as if it held it
				// with another body: it merged the key with a used one
				// (case folded, truncated; issue 28).
				return Violation(ReplayConsistent, "%s: a key no request had used was answered 422, as another body under a used key", n.of(ref))
			}
		}
	}
	return Finding{}
}

// checkMismatchRejected: the same key with another body is refused with
// 422 and creates nothing (draft §2.6; docs/provider-api.md).
func checkMismatchRejected(w World) Finding { return mismatchVerdicts(w, replaySpec(w)) }

// mismatchVerdicts is mismatch-rejected over verdicts vs.
func mismatchVerdicts(w World, vs []specVerdict) Finding {
	n := newNames(w)
	for _, v := range vs {
		if v.expect.Kind == models.ExpectMismatch && !refusedStoreDown(v.ex) && !v.expect.Matches(v.ex.ProviderStatus, v.ex.ProviderBodyDigest) {
			return Violation(MismatchRejected, "%s: a request reusing a key with another body was answered %s, not 422", n.of(v.ex.MerchantReference), answer(v.ex))
		}
		if f := refusalFormat(v, n); !f.Holds() {
			return f
		}
	}
	return Finding{}
}

// nextJump is when the first time jump after t ended (an advance
// operation's return), or a century after t when none followed.
func nextJump(w World, t time.Time) time.Time {
	for _, op := range w.History.Ops {
		if op.Kind == models.OpAdvance && op.Returned && op.InvokedAt.After(t) {
			return op.ReturnedAt
		}
	}
	return t.Add(100 * 365 * 24 * time.Hour)
}

// refusedStoreDown reports whether e met an unreachable key store
// (fault kind "store-down") and the provider refused it with 503: whatever the
// key's state, a provider that cannot read its store cannot replay, 409 or
// 422, only refuse, and a 503 stores nothing (models.Spec.Complete).
func refusedStoreDown(e models.Exchange) bool {
	return e.Fault == faultStoreDown && e.ProviderStatus == 503
}

// answer is the provider's answer to e for messages: "201 ch_000002".
func answer(e models.Exchange) string {
	s := itoa(e.ProviderStatus)
	if e.ProviderChargeID != "" {
		s += " " + e.ProviderChargeID
	}
	return s
}

// checkBooksBalance: every Succeeded attempt has exactly one provider
// charge, with its id, amount and currency; every provider charge belongs
// to an attempt that is Succeeded with that charge or still Open (unsettled);
// a Paid order names its attempt's charge (seed article 000, "muhasebe
// mutabakatı").
func checkBooksBalance(w World) Finding {
	n := newNames(w)
	chargesOf := map[string][]models.Charge{}
	for _, c := range w.Charges {
		if c.Status == "succeeded" {
			chargesOf[c.MerchantReference] = append(chargesOf[c.MerchantReference], c)
		}
	}
	attemptOf := map[string]models.PaymentAttempt{}
	paidWith := map[int64]string{}
	for _, a := range w.Attempts {
		ref := a.Reference()
		attemptOf[ref] = a
		if a.Status != models.AttemptSucceeded {
			continue
		}
		paidWith[a.OrderID] = a.ProviderChargeID
		cs := chargesOf[ref]
		switch {
		case len(cs) != 1:
			return Violation(BooksBalance, "%s is Succeeded but the provider holds %d charges for it", n.of(ref), len(cs))
		case cs[0].ID != a.ProviderChargeID:
			return Violation(BooksBalance, "%s is Succeeded with %s but the provider's charge is %s", n.of(ref), a.ProviderChargeID, cs[0].ID)
		case cs[0].Amount != a.Amount || cs[0].Currency != a.Currency:
			return Violation(BooksBalance, "%s: the provider charged %d %s, the intent was %d %s", n.of(ref), cs[0].Amount, cs[0].Currency, a.Amount, a.Currency)
		}
	}
	for _, c := range w.Charges {
		if c.Status != "succeeded" {
			continue
		}
		a, ok := attemptOf[c.MerchantReference]
		switch {
		case !ok:
			return Violation(BooksBalance, "the provider holds %s for %s, which the client has no record of", c.ID, n.of(c.MerchantReference))
		case a.Status != models.AttemptSucceeded && a.Status != models.AttemptOpen:
			return Violation(BooksBalance, "the provider holds %s for %s, which the client marked %s", c.ID, n.of(c.MerchantReference), a.Status)
		}
	}
	for _, o := range w.Orders {
		if o.Status == models.OrderPaid && o.ProviderChargeID != paidWith[o.ID] {
			return Violation(BooksBalance, "order %d is Paid with %q but its Succeeded intent has %q", o.ID, o.ProviderChargeID, paidWith[o.ID])
		}
	}
	return Finding{}
}

// checkConverges: after faults heal and AbandonAfter plus the interval
// pass, no attempt is Open and an order is Paid exactly when the provider
// holds its charge (seed article 000, "Reconciliation").
func checkConverges(w World) Finding {
	n := newNames(w)
	for _, a := range w.Attempts {
		if a.Status == models.AttemptOpen {
			return Violation(ReconciliationConverges, "%s is still Open after reconciliation", n.of(a.Reference()))
		}
	}
	charged := map[int64]string{}
	for _, c := range w.Charges {
		if c.Status == "succeeded" {
			charged[orderOf(c.MerchantReference)] = c.ID
		}
	}
	for _, o := range w.Orders {
		id, has := charged[o.ID]
		switch {
		case has && o.Status != models.OrderPaid:
			return Violation(ReconciliationConverges, "order %d is %s but the provider holds %s for it", o.ID, o.Status, id)
		case !has && o.Status == models.OrderPaid:
			return Violation(ReconciliationConverges, "order %d is Paid but the provider holds no charge for it", o.ID)
		}
	}
	return Finding{}
}
