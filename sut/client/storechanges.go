package client

import (
	"slices"

	"github.com/google/uuid"

	"github.com/idemcheck/idemcheck/models"
)

// changeLog is the in-memory Store's record of which orders, attempts and
// refund intents each change touched, in order, so that a reader that
// keeps its own copy of the store reads only what changed since it last
// read (ChangesFrom) instead of every element: the harness reads the
// store after every step of a sequence. Guarded by Store.mu.
type changeLog struct {
	entries   []storeChange
	attemptAt map[uuid.UUID]int // an attempt's index in creation order
}

// storeChange is one element a change touched: an order by id, an
// attempt or a refund intent by its index in creation order.
type storeChange struct {
	kind changeKind
	id   int64 // the order's id, or the attempt's or refund intent's index
}

type changeKind uint8

const (
	changedOrder changeKind = iota
	changedAttempt
	changedIntent
)

// StoreChanges is what changed in a Store since a position of its change
// log (Store.ChangesFrom): each order, attempt and refund intent created
// or changed, once, with its value now. Attempts and Intents are
// parallel to AttemptAt and IntentAt, their indices in creation order
// (Snapshot's attempts, Refunds' intents); orders are in the order of
// their first change since that position (a new order's id is above
// every earlier order's).
type StoreChanges struct {
	Orders              []models.Order
	AttemptAt, IntentAt []int
	Attempts            []models.PaymentAttempt
	Intents             []models.RefundIntent
}

// ChangesFrom returns what changed since position from of the store's
// change log (0: every order, attempt and refund intent it ever held) and
// the position to read from next time.
func (s *Store) ChangesFrom(from int) (StoreChanges, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out StoreChanges
	seen := map[storeChange]bool{}
	entries := s.log.entries
	if from <= 0 || from > len(entries) {
		from, entries = 0, s.everythingLocked()
	} else {
		entries = entries[from:]
	}
	for _, c := range entries {
		if seen[c] {
			continue
		}
		seen[c] = true
		switch c.kind {
		case changedOrder:
			out.Orders = append(out.Orders, *s.orders[c.id])
		case changedAttempt:
			out.AttemptAt = append(out.AttemptAt, int(c.id))
		case changedIntent:
			out.IntentAt = append(out.IntentAt, int(c.id))
		}
	}
	slices.Sort(out.AttemptAt)
	slices.Sort(out.IntentAt)
	for _, i := range out.AttemptAt {
		out.Attempts = append(out.Attempts, *s.attempts[i])
	}
	for _, i := range out.IntentAt {
		out.Intents = append(out.Intents, *s.refunds[i])
	}
	return out, len(s.log.entries)
}

// everythingLocked is a change of every element the store holds: orders
// by id, attempts and refund intents in creation order.
func (s *Store) everythingLocked() []storeChange {
	var all []storeChange
	for id := range s.orders {
		all = append(all, storeChange{changedOrder, id})
	}
	slices.SortFunc(all, func(a, b storeChange) int { return int(a.id - b.id) })
	for i := range s.attempts {
		all = append(all, storeChange{changedAttempt, int64(i)})
	}
	for i := range s.refunds {
		all = append(all, storeChange{changedIntent, int64(i)})
	}
	return all
}

// touchOrder logs a change of order o. s.mu must be held.
func (s *Store) touchOrder(o *models.Order) {
	s.log.entries = append(s.log.entries, storeChange{changedOrder, o.ID})
}

// touchAttempt logs a change of attempt a (created with newAttemptLocked).
// s.mu must be held.
func (s *Store) touchAttempt(a *models.PaymentAttempt) {
	s.log.entries = append(s.log.entries, storeChange{changedAttempt, int64(s.log.attemptAt[a.ID])})
}

// touchIntent logs a change of the i-th refund intent. s.mu must be held.
func (s *Store) touchIntent(i int) {
	s.log.entries = append(s.log.entries, storeChange{changedIntent, int64(i)})
}

// newAttemptLocked appends a to the store's attempts. s.mu must be held.
func (s *Store) newAttemptLocked(a *models.PaymentAttempt) {
	if s.log.attemptAt == nil {
		s.log.attemptAt = map[uuid.UUID]int{}
	}
	s.log.attemptAt[a.ID] = len(s.attempts)
	s.attempts = append(s.attempts, a)
	s.touchAttempt(a)
}
