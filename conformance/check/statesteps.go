package check

import "github.com/idemcheck/idemcheck/models"

// The Checker's incremental forms of the invariants over the client's
// and the provider's state (state.go): each rejudges the references and
// orders an element changed at this step belongs to, and on a failure, or
// when the state cannot be followed on, judges whole (Check) for the
// first violation exactly as Evaluate names it.

func (c *Checker) stepAtMostOneCharge(w World) Finding {
	s := &c.st
	if s.whole {
		return checkAtMostOneCharge(w)
	}
	for _, i := range s.dc {
		n := 0
		for _, j := range s.chargesAt[orderOf(s.charges[i].MerchantReference)] {
			if s.charges[j].Status == "succeeded" {
				n++
			}
		}
		if n > 1 {
			return checkAtMostOneCharge(w)
		}
	}
	return Finding{}
}

func (c *Checker) stepAtMostOneRefund(w World) Finding {
	s := &c.st
	if !w.RefundsJudged {
		return Finding{}
	}
	if s.whole {
		return checkAtMostOneRefund(w)
	}
	clear(s.refs)
	for _, i := range s.dr {
		s.refs[s.refunds[i].MerchantReference] = true
	}
	for _, i := range s.di {
		s.refs[s.intentReference(s.intents[i])] = true
	}
	for ref := range s.refs {
		if !models.IsRefundReference(ref) {
			continue
		}
		held := len(s.refundsRef[ref])
		for _, k := range s.intentsRef[ref] {
			if st := s.intents[k].Status; held > 1 || held == 1 && (st == models.RefundRefused || st == models.RefundAbandoned) {
				return checkAtMostOneRefund(w)
			}
		}
	}
	return Finding{}
}

func (c *Checker) stepBooksBalance(w World) Finding {
	s := &c.st
	if s.whole || !s.booksHold(w) {
		return checkBooksWithRefunds(w)
	}
	return Finding{}
}

// booksHold is checkBooksWithRefunds over what changed at this step.
func (s *state) booksHold(w World) bool {
	clear(s.refs)
	clear(s.orderIDs)
	for _, i := range s.da {
		s.refs[s.attemptRef(s.attempts[i])] = true
		s.orderIDs[s.attempts[i].OrderID] = true
	}
	for _, i := range s.dc {
		s.refs[s.charges[i].MerchantReference] = true
	}
	for _, i := range s.do {
		s.orderIDs[s.orders[i].ID] = true
	}
	for ref := range s.refs {
		if !s.refHolds(ref) {
			return false
		}
	}
	for id := range s.orderIDs {
		paid := ""
		for _, k := range s.attemptsAt[id] {
			if a := &s.attempts[k]; a.Status == models.AttemptSucceeded {
				paid = a.ProviderChargeID
			}
		}
		for _, k := range s.ordersAt[id] {
			if o := &s.orders[k]; o.Status == models.OrderPaid && o.ProviderChargeID != paid {
				return false
			}
		}
	}
	if !w.RefundsJudged {
		return true
	}
	clear(s.chargeIDs)
	for _, i := range s.dr {
		s.chargeIDs[s.refunds[i].Charge] = true
	}
	for _, i := range s.dc {
		s.chargeIDs[s.charges[i].ID] = true
	}
	for id := range s.chargeIDs {
		var refunded int64
		for _, k := range s.refundsOf[id] {
			refunded += s.refunds[k].Amount
		}
		for _, k := range s.chargeByID[id] {
			if refunded > s.charges[k].Amount {
				return false
			}
		}
	}
	judge := func(r *models.RefundIntent) bool {
		if r.Status != models.RefundSucceeded {
			return true
		}
		k, ok := s.refundByID[r.ProviderRefundID] // the last refund with the id, as checkBooksWithRefunds keeps it
		return ok && s.refunds[k].MerchantReference == s.intentReference(*r) && s.refunds[k].Amount == r.Amount
	}
	if s.refundsMove {
		for k := range s.intents {
			if !judge(&s.intents[k]) {
				return false
			}
		}
		return true
	}
	for _, i := range s.di {
		if !judge(&s.intents[i]) {
			return false
		}
	}
	return true
}

// refHolds is checkBooksBalance's judgement of one reference: each
// Succeeded attempt has its one charge, and each charge an attempt that
// is Succeeded or Open.
func (s *state) refHolds(ref string) bool {
	atts, chs := s.attemptsOf[ref], s.chargesOf[ref]
	var one *models.Charge
	n := 0
	for _, k := range chs {
		if c := &s.charges[k]; c.Status == "succeeded" {
			one, n = c, n+1
			if len(atts) == 0 {
				return false
			}
			if st := s.attempts[atts[len(atts)-1]].Status; st != models.AttemptSucceeded && st != models.AttemptOpen {
				return false
			}
		}
	}
	for _, k := range atts {
		a := &s.attempts[k]
		if a.Status != models.AttemptSucceeded {
			continue
		}
		if n != 1 || one.ID != a.ProviderChargeID || one.Amount != a.Amount || one.Currency != a.Currency {
			return false
		}
	}
	return true
}

// conflictStateHolds is conflictState over what changed at this step: an
// order with two open attempts, or not PaymentPending with one open; an
// attempt Declined without a 402 (seen402 only grows).
func (s *state) conflictStateHolds(seen402 map[string]bool) bool {
	clear(s.orderIDs)
	for _, i := range s.da {
		a := &s.attempts[i]
		if a.Status == models.AttemptDeclined && !seen402[s.attemptRef(*a)] {
			return false
		}
		s.orderIDs[a.OrderID] = true
	}
	for _, i := range s.do {
		s.orderIDs[s.orders[i].ID] = true
	}
	for id := range s.orderIDs {
		open := 0
		for _, k := range s.attemptsAt[id] {
			if s.attempts[k].Status == models.AttemptOpen {
				open++
			}
		}
		if open > 1 {
			return false
		}
		for _, k := range s.ordersAt[id] {
			if open > 0 && s.orders[k].Status != models.OrderPaymentPending {
				return false
			}
		}
	}
	return true
}
