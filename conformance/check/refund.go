package check

import (
	"strings"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
)

// The refund invariants' names (docs/invariants.md, for the refunds endpoint).
const (
	AtMostOneRefundPerIntent = "at-most-one-refund-per-intent"
	KeyScopedPerEndpoint     = "key-scoped-per-endpoint"
)

// refundName is how a report names refund intent ref: "refund 2 of order
// 1", numbered per order in creation order, or the reference itself for
// one the client has no record of.
func refundName(w World, ref string) string {
	n := map[int64]int{}
	for _, r := range w.RefundIntents {
		n[r.OrderID]++
		if r.Reference() == ref {
			return "refund " + itoa(n[r.OrderID]) + " of order " + itoa(int(r.OrderID))
		}
	}
	return "refund intent " + ref
}

// checkAtMostOneRefund: the provider holds at most one refund per refund
// intent (its merchant_reference), and none for an intent the client
// settled as not refunded (Refused or Abandoned): a retry under a new key,
// or a provider that runs a refund's key again, refunds twice (seed article
// 004: /refunds needs the key as /charges does).
func checkAtMostOneRefund(w World) Finding {
	if !w.RefundsJudged {
		return Finding{}
	}
	held := map[string][]string{}
	for _, re := range w.Refunds {
		if models.IsRefundReference(re.MerchantReference) {
			held[re.MerchantReference] = append(held[re.MerchantReference], re.ID)
		}
	}
	for _, r := range w.RefundIntents {
		ids := held[r.Reference()]
		switch {
		case len(ids) > 1:
			return Violation(AtMostOneRefundPerIntent, "the provider holds %d refunds (%s) for %s", len(ids), strings.Join(ids, ", "), refundName(w, r.Reference()))
		case len(ids) == 1 && (r.Status == models.RefundRefused || r.Status == models.RefundAbandoned):
			return Violation(AtMostOneRefundPerIntent, "the provider holds %s for %s, which the client marked %s", ids[0], refundName(w, r.Reference()), r.Status)
		}
	}
	return Finding{}
}

// checkBooksWithRefunds is books-balance with the refunds: the charges'
// books (checkBooksBalance), then never more refunded from a charge than
// it charged, and every Succeeded refund intent has its refund at the
// provider, with its id and amount.
func checkBooksWithRefunds(w World) Finding {
	if f := checkBooksBalance(w); !f.Holds() || !w.RefundsJudged {
		return f
	}
	refunded := map[string]int64{}
	byID := map[string]models.Refund{}
	for _, re := range w.Refunds {
		refunded[re.Charge] += re.Amount
		byID[re.ID] = re
	}
	for _, c := range w.Charges {
		if refunded[c.ID] > c.Amount {
			return Violation(BooksBalance, "the provider refunded %d from %s, which charged %d", refunded[c.ID], c.ID, c.Amount)
		}
	}
	for _, r := range w.RefundIntents {
		if r.Status != models.RefundSucceeded {
			continue
		}
		re, ok := byID[r.ProviderRefundID]
		switch {
		case !ok || re.MerchantReference != r.Reference():
			return Violation(BooksBalance, "%s is Succeeded with %q, which the provider does not hold for it", refundName(w, r.Reference()), r.ProviderRefundID)
		case re.Amount != r.Amount:
			return Violation(BooksBalance, "%s: the provider refunded %d, the intent was %d", refundName(w, r.Reference()), re.Amount, r.Amount)
		}
	}
	return Finding{}
}

// checkKeyScopedPerEndpoint: a key first used on POST /v1/charges and then
// sent to /v1/refunds is refused (a final 4xx such as 400 or 422: the
// client knows to take another key) or kept apart (processed as a refund
// of its own); the provider never answers the refund with the charge's
// stored response (its body, or a charge id), and never with 409 once the
// charge has finished: 409 says "retry later with the same key", so the
// refund is blocked for as long as the key is remembered (draft §2: a key
// names one request to one resource; seed article 004 names /charges and
// /refunds as separate operations). A 409 while the charge is still in
// flight ends with it.
func checkKeyScopedPerEndpoint(w World) Finding {
	exs := w.History.Exchanges
	// The refunds first, then the exchanges under their keys: linear in
	// the history (keys are one per intent, so each group is small).
	var refunds []int
	byKey := map[string][]int{}
	for i := range exs {
		if e := &exs[i]; e.IsRefund() && e.HasKey && e.ProviderDone {
			refunds = append(refunds, i) // by pointer: most exchanges are creates, and an Exchange is large
			byKey[e.Key] = nil
		}
	}
	if len(refunds) == 0 {
		return Finding{}
	}
	for i := range exs {
		if e := &exs[i]; e.IsPost() || e.IsRefund() {
			if group, ok := byKey[e.Key]; ok {
				byKey[e.Key] = append(group, i)
			}
		}
	}
	for _, i := range refunds {
		if f := endpointRefund(exs, i, byKey[exs[i].Key]); !f.Holds() {
			return f
		}
	}
	return Finding{}
}

// endpointRefund is key-scoped-per-endpoint's judgement of the refund
// exs[i] (keyed, answered), given group, the indices of the creates and
// refunds under its key in the history's order.
func endpointRefund(exs []models.Exchange, i int, group []int) Finding {
	e := &exs[i]
	if faultAnswered(e) {
		return Finding{} // the fault's answer, not the provider's
	}
	var charges []*models.Exchange
	inFlight := false // an earlier refund under the key still at the provider when e arrived: a 409 is that refund's
	for _, j := range group {
		c := &exs[j]
		if !c.Forwarded || c.ArrivalSeq >= e.ArrivalSeq {
			continue
		}
		switch {
		case c.IsPost():
			charges = append(charges, c)
		case !c.ProviderDone || c.ProviderSeq > e.ArrivalSeq:
			inFlight = true
		}
	}
	if len(charges) == 0 {
		return Finding{}
	}
	finished := !inFlight
	for _, c := range charges {
		if !c.ProviderDone || c.ProviderSeq > e.ArrivalSeq {
			finished = false
		}
		// The charge's stored response: what it answered once processed
		// (a 409 of the charges endpoint is no stored response, nor a
		// 429 or 503: nothing was processed or stored, and a refund
		// turned away the same way, with the same problem body, is the
		// refund's own answer; nor an answer its fault gave in the
		// provider's place).
		if c.ProviderDone && !neverStored(c.ProviderStatus) && !faultAnswered(c) && c.ProviderStatus == e.ProviderStatus && c.ProviderBodyDigest == e.ProviderBodyDigest {
			return Violation(KeyScopedPerEndpoint, "a refund under the key of %s was answered with that charge's stored response (%d)", chargeName(*c), e.ProviderStatus)
		}
	}
	switch {
	case strings.HasPrefix(e.ProviderChargeID, "ch_"):
		return Violation(KeyScopedPerEndpoint, "a refund under the key of %s was answered with charge %s", chargeName(*charges[0]), e.ProviderChargeID)
	case e.ProviderStatus == 409 && finished:
		return Violation(KeyScopedPerEndpoint, "a refund under the key of %s was answered 409 though the charge had finished: the key blocks the refunds endpoint", chargeName(*charges[0]))
	}
	return Finding{}
}

// faultAnswered reports whether e was answered by its fault in the
// provider's place (a status fault or a reset): where the wire applies
// those itself, as WireMock does, the exchange reached it and is answered,
// but nothing was processed and nothing stored.
func faultAnswered(e *models.Exchange) bool {
	k := faults.Kind(e.Fault)
	return faults.IsStatus(k) || k == faults.KindReset
}

// neverStored reports whether status is an answer no key stores: 409 (in
// flight), 429 (nothing processed; docs/provider-api.md) and any 5xx, which
// releases the key (models.Spec.Complete).
func neverStored(status int) bool { return status == 409 || status == 429 || status >= 500 }

// chargeName names the charge request c for a report: "the charge of
// order N".
func chargeName(c models.Exchange) string {
	return "the charge of order " + itoa(int(orderOf(c.MerchantReference)))
}

// checkConvergesWithRefunds is reconciliation-converges with the refunds:
// after reconciliation no refund intent is left Open either.
func checkConvergesWithRefunds(w World) Finding {
	if f := checkConverges(w); !f.Holds() {
		return f
	}
	for _, r := range w.RefundIntents {
		if r.Status == models.RefundOpen {
			return Violation(ReconciliationConverges, "%s is still Open after reconciliation", refundName(w, r.Reference()))
		}
	}
	return Finding{}
}
