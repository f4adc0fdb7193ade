package check

import (
	"github.com/google/uuid"

	"github.com/idemcheck/idemcheck/models"
)

// state is the Checker's copy of the client's and the provider's state as
// the last step judged it, what changed at this step, and indices by
// reference and order: the invariants over that state (at-most-one-
// charge-per-order, at-most-one-refund-per-intent, books-balance and
// 409-never-final's open intents) rejudge only the references and orders a
// changed element belongs to. A list that shrank, or an element that
// changed its identity (another id or reference at an index), makes them
// judge the state whole (Check) at this step.
type state struct {
	attempts []models.PaymentAttempt
	orders   []models.Order
	charges  []models.Charge
	refunds  []models.Refund
	intents  []models.RefundIntent
	// the indices changed or new at this step
	da, do, dc, dr, di []int
	whole              bool
	gen                uint64 // the StateDelta.Gen of the World last taken, 0 if none

	refOf       map[uuid.UUID]string // attempt id → merchant reference
	intentRef   map[uuid.UUID]string // refund intent id → its reference
	attemptsOf  map[string][]int     // reference → attempts
	attemptsAt  map[int64][]int      // order id → attempts
	ordersAt    map[int64][]int      // order id → orders
	chargesOf   map[string][]int     // reference → charges
	chargesAt   map[int64][]int      // order id → charges
	chargeByID  map[string][]int     // charge id → charges
	refundsOf   map[string][]int     // charge id → refunds
	refundsRef  map[string][]int     // refund reference → refunds
	refundByID  map[string]int       // refund id → its last refund
	intentsRef  map[string][]int     // refund reference → refund intents
	refs, seen  map[string]bool      // scratch: references to rejudge
	orderIDs    map[int64]bool       // scratch: orders to rejudge
	chargeIDs   map[string]bool      // scratch: charge ids to rejudge
	refundsMove bool                 // a refund changed: rejudge every Succeeded refund intent
}

// StateDelta is what a World's producer knows changed in the state it
// hands over since the World it handed over before (the machine's view of
// the in-memory client store, and the embedded provider's append-only
// ledger). Gen numbers this World and Follows the one it follows; a World
// whose Follows is not the Gen of the World a Checker judged last is
// compared element by element, as one without a StateDelta is.
type StateDelta struct {
	Gen, Follows uint64
	// Orders, Attempts and RefundIntents are the indices below the
	// previous World's lengths whose element changed (ascending); every
	// index from those lengths on is new.
	Orders, Attempts, RefundIntents []int
	// Charges and Refunds are how many of the previous World's Charges
	// and Refunds are unchanged (a ledger that only appends); the rest are
	// compared.
	Charges, Refunds int
}

// follow copies into *prev the elements of cur that changed (the indices
// changed, below len(*prev)) or are new, lists them in *out, and reports
// false when prev cannot be followed on (cur is shorter, or same reports
// another identity at an index), as diff does.
func follow[T comparable](prev *[]T, cur []T, changed []int, out *[]int, same func(a, b T) bool) bool {
	*out = (*out)[:0]
	p := *prev
	if len(cur) < len(p) {
		*prev = append(p[:0], cur...)
		return false
	}
	ok := true
	for _, i := range changed {
		if i >= len(p) {
			break
		}
		if p[i] != cur[i] {
			ok = ok && same(p[i], cur[i])
			p[i] = cur[i]
			*out = append(*out, i)
		}
	}
	for i := len(p); i < len(cur); i++ {
		*out = append(*out, i)
	}
	*prev = append(p, cur[len(p):]...)
	return ok
}

// diffFrom is diff of cur against *prev from index from on: the elements
// below it are known unchanged.
func diffFrom[T comparable](prev *[]T, cur []T, from int, out *[]int, same func(a, b T) bool) bool {
	p := *prev
	if from > len(p) || len(cur) < len(p) {
		return diff(prev, cur, out, same)
	}
	tail := p[from:]
	ok := diff(&tail, cur[from:], out, same)
	for k := range *out {
		(*out)[k] += from
	}
	*prev = append(p[:from], tail...)
	return ok
}

// diff copies into *prev what changed in cur, lists the changed or new
// indices in *out, and reports false when prev cannot be followed on
// (cur is shorter, or same reports another identity at an index).
func diff[T comparable](prev *[]T, cur []T, out *[]int, same func(a, b T) bool) bool {
	*out = (*out)[:0]
	p := *prev
	if len(cur) < len(p) {
		*prev = append(p[:0], cur...)
		return false
	}
	ok := true
	for i := range p {
		if p[i] != cur[i] {
			ok = ok && same(p[i], cur[i])
			p[i] = cur[i]
			*out = append(*out, i)
		}
	}
	for i := len(p); i < len(cur); i++ {
		*out = append(*out, i)
	}
	if cap(p) < len(cur) { // room for as many again: a step appends a few
		p = append(make([]T, 0, 2*len(cur)+16), p...)
	}
	*prev = append(p, cur[len(p):]...)
	return ok
}

// update takes w's state: what changed since the last step, filed.
func (s *state) update(w World) {
	if s.refOf == nil {
		s.refOf, s.intentRef = map[uuid.UUID]string{}, map[uuid.UUID]string{}
		s.refs, s.seen, s.orderIDs, s.chargeIDs = map[string]bool{}, map[string]bool{}, map[int64]bool{}, map[string]bool{}
		s.reindex()
	}
	na, no, nc, nr, ni := len(s.attempts), len(s.orders), len(s.charges), len(s.refunds), len(s.intents)
	sameAttempt := func(a, b models.PaymentAttempt) bool { return a.ID == b.ID && a.OrderID == b.OrderID }
	sameOrder := func(a, b models.Order) bool { return a.ID == b.ID }
	sameCharge := func(a, b models.Charge) bool { return a.ID == b.ID && a.MerchantReference == b.MerchantReference }
	sameIntent := func(a, b models.RefundIntent) bool { return a.ID == b.ID && a.OrderID == b.OrderID }
	sameRefund := func(a, b models.Refund) bool {
		return a.ID == b.ID && a.Charge == b.Charge && a.MerchantReference == b.MerchantReference
	}
	var ok bool
	if d := w.State; d != nil && s.gen != 0 && d.Follows == s.gen {
		ok = follow(&s.attempts, w.Attempts, d.Attempts, &s.da, sameAttempt)
		ok = follow(&s.orders, w.Orders, d.Orders, &s.do, sameOrder) && ok
		ok = diffFrom(&s.charges, w.Charges, d.Charges, &s.dc, sameCharge) && ok
		ok = follow(&s.intents, w.RefundIntents, d.RefundIntents, &s.di, sameIntent) && ok
		ok = diffFrom(&s.refunds, w.Refunds, d.Refunds, &s.dr, sameRefund) && ok
	} else {
		ok = diff(&s.attempts, w.Attempts, &s.da, sameAttempt)
		ok = diff(&s.orders, w.Orders, &s.do, sameOrder) && ok
		ok = diff(&s.charges, w.Charges, &s.dc, sameCharge) && ok
		ok = diff(&s.intents, w.RefundIntents, &s.di, sameIntent) && ok
		ok = diff(&s.refunds, w.Refunds, &s.dr, sameRefund) && ok
	}
	s.gen = 0
	if w.State != nil {
		s.gen = w.State.Gen
	}
	if !ok {
		s.reindex()
		s.whole = true
		return
	}
	s.whole = false
	for i := na; i < len(s.attempts); i++ {
		a := &s.attempts[i]
		ref := s.attemptRef(*a)
		s.attemptsOf[ref] = append(s.attemptsOf[ref], i)
		s.attemptsAt[a.OrderID] = append(s.attemptsAt[a.OrderID], i)
	}
	for i := no; i < len(s.orders); i++ {
		s.ordersAt[s.orders[i].ID] = append(s.ordersAt[s.orders[i].ID], i)
	}
	for i := nc; i < len(s.charges); i++ {
		c := &s.charges[i]
		s.chargesOf[c.MerchantReference] = append(s.chargesOf[c.MerchantReference], i)
		s.chargesAt[orderOf(c.MerchantReference)] = append(s.chargesAt[orderOf(c.MerchantReference)], i)
		s.chargeByID[c.ID] = append(s.chargeByID[c.ID], i)
	}
	for i := nr; i < len(s.refunds); i++ {
		r := &s.refunds[i]
		s.refundsOf[r.Charge] = append(s.refundsOf[r.Charge], i)
		s.refundsRef[r.MerchantReference] = append(s.refundsRef[r.MerchantReference], i)
		s.refundByID[r.ID] = i
	}
	for i := ni; i < len(s.intents); i++ {
		ref := s.intentReference(s.intents[i])
		s.intentsRef[ref] = append(s.intentsRef[ref], i)
	}
	s.refundsMove = len(s.dr) > 0
}

// reindex files the whole state again (after update found it could not
// follow on).
func (s *state) reindex() {
	s.attemptsOf, s.attemptsAt, s.ordersAt = map[string][]int{}, map[int64][]int{}, map[int64][]int{}
	s.chargesOf, s.chargesAt, s.chargeByID = map[string][]int{}, map[int64][]int{}, map[string][]int{}
	s.refundsOf, s.refundsRef, s.intentsRef, s.refundByID = map[string][]int{}, map[string][]int{}, map[string][]int{}, map[string]int{}
	a, o, c, r, i := s.attempts, s.orders, s.charges, s.refunds, s.intents
	s.attempts, s.orders, s.charges, s.refunds, s.intents = a[:0], o[:0], c[:0], r[:0], i[:0]
	s.update(World{Attempts: a, Orders: o, Charges: c, Refunds: r, RefundIntents: i})
}

// attemptRef is a's merchant reference, made once per attempt.
func (s *state) attemptRef(a models.PaymentAttempt) string {
	ref, ok := s.refOf[a.ID]
	if !ok {
		ref = a.Reference()
		s.refOf[a.ID] = ref
	}
	return ref
}

// intentReference is r's reference, made once per refund intent.
func (s *state) intentReference(r models.RefundIntent) string {
	ref, ok := s.intentRef[r.ID]
	if !ok {
		ref = r.Reference()
		s.intentRef[r.ID] = ref
	}
	return ref
}
