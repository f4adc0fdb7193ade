package client

import (
	"cmp"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/idemcheck/idemcheck/models"
)

// Store errors.
var (
	// ErrAttemptConflict: the order has an open attempt with another card or
	// amount, whose outcome is still unknown (seed article 000,
	// PaymentAttemptConflictException). Starting a second one could charge
	// the shopper twice.
	ErrAttemptConflict = errors.New("client: a previous payment for this order is still being verified")
	// ErrUnknownOrder: no order has the id.
	ErrUnknownOrder = errors.New("client: unknown order")
	// ErrFenced: the write came from a client whose epoch is stale (it
	// crashed, or a newer client opened the store) and was dropped.
	ErrFenced = errors.New("client: stale epoch, store write dropped")
	// errAlreadyPaid: the order was paid before an attempt could start.
	errAlreadyPaid = errors.New("client: order already paid")
)

// Store holds orders and payment attempts in memory. It is the durable
// part of the reference client: it survives a client crash, and a new
// Client opened on it resends the stored keys (seed article 000: the
// attempt is written in the same transaction as the order's move to
// PaymentPending, before the first send — the outbox idea).
//
// Every write carries the epoch of the client that makes it; New bumps the
// epoch, and Client.Crash fences its own, so writes from a crashed or
// superseded client are dropped with ErrFenced.
//
// A Store is safe for concurrent use.
type Store struct {
	mu       sync.Mutex // guards all fields below
	epoch    uint64
	nextID   int64
	orders   map[int64]*models.Order
	attempts []*models.PaymentAttempt // creation order
}

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{orders: make(map[int64]*models.Order)}
}

// Orders returns a snapshot of every order, by id.
func (s *Store) Orders() []models.Order {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]models.Order, 0, len(s.orders))
	for _, o := range s.orders {
		out = append(out, *o)
	}
	slices.SortFunc(out, func(a, b models.Order) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// Attempts returns a snapshot of every payment attempt, in creation order.
func (s *Store) Attempts() []models.PaymentAttempt {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]models.PaymentAttempt, len(s.attempts))
	for i, a := range s.attempts {
		out[i] = *a
	}
	return out
}

// Order returns order id.
func (s *Store) Order(id int64) (models.Order, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.orders[id]
	if !ok {
		return models.Order{}, false
	}
	return *o, true
}

// open starts a new epoch, fencing every earlier client, and returns it.
func (s *Store) open() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.epoch++
	return s.epoch
}

// fence ends epoch if it is still the current one.
func (s *Store) fence(epoch uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.epoch == epoch {
		s.epoch++
	}
}

// openOrder stores a new Placed order with the next id (1, 2, 3...).
func (s *Store) openOrder(epoch uint64, total int64, currency string) (models.Order, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if epoch != s.epoch {
		return models.Order{}, ErrFenced
	}
	s.nextID++
	o := &models.Order{ID: s.nextID, Total: total, Currency: currency, Status: models.OrderPlaced}
	s.orders[o.ID] = o
	return *o, nil
}

// startSpec is what getOrStart needs to start a new attempt.
type startSpec struct {
	orderID  int64
	cardHash string
	now      time.Time
	newID    func() uuid.UUID
	newKey   func() string
	// Planted bugs (planted.go); both false in the reference client.
	ignoreOpen  bool // planted bug: CallbackOwnKey
	noCardGuard bool // planted bug: UnknownShownAsFailure
}

// getOrStart returns the open attempt of the order when its amount and card
// hash match (reused is true), fails with ErrAttemptConflict when the open
// attempt has another card or amount, and otherwise stores a new Open
// attempt and moves the order to PaymentPending, in one critical section
// (seed article 000, PaymentAttemptStore.GetOrStart). The amount and
// currency are the order's. A Paid order yields errAlreadyPaid.
func (s *Store) getOrStart(epoch uint64, sp startSpec) (att models.PaymentAttempt, order models.Order, reused bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if epoch != s.epoch {
		return att, order, false, ErrFenced
	}
	o, ok := s.orders[sp.orderID]
	if !ok {
		return att, order, false, ErrUnknownOrder
	}
	if o.Status == models.OrderPaid {
		return att, *o, false, errAlreadyPaid
	}
	open := s.openAttemptLocked(o.ID)
	if sp.ignoreOpen || sp.noCardGuard { // planted bugs: CallbackOwnKey, UnknownShownAsFailure
		open = s.plantedOpenLocked(o, sp)
	}
	if open != nil {
		if open.Amount == o.Total && open.Currency == o.Currency && open.CardTokenHash == sp.cardHash {
			open.LastSentAt = sp.now // about to resend: reconciliation must wait again
			return *open, *o, true, nil
		}
		return att, *o, false, ErrAttemptConflict
	}
	a := &models.PaymentAttempt{
		ID:             sp.newID(),
		OrderID:        o.ID,
		IdempotencyKey: sp.newKey(),
		Amount:         o.Total,
		Currency:       o.Currency,
		CardTokenHash:  sp.cardHash,
		CreatedAt:      sp.now,
		LastSentAt:     sp.now,
		Status:         models.AttemptOpen,
	}
	s.attempts = append(s.attempts, a)
	o.Status = models.OrderPaymentPending
	return *a, *o, false, nil
}

// succeed records that the provider holds charge chargeID for attempt id:
// the attempt becomes Succeeded and its order Paid. A 201 is the provider's
// truth, so it is recorded even over an Abandoned attempt; an order already
// Paid keeps its first charge id.
func (s *Store) succeed(epoch uint64, id uuid.UUID, chargeID string) (models.Order, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if epoch != s.epoch {
		return models.Order{}, ErrFenced
	}
	a := s.attemptLocked(id)
	if a == nil {
		return models.Order{}, ErrUnknownOrder
	}
	a.Status = models.AttemptSucceeded
	a.ProviderChargeID = chargeID
	o := s.orders[a.OrderID]
	if o.Status != models.OrderPaid {
		o.Status = models.OrderPaid
		o.ProviderChargeID = chargeID
	}
	return *o, nil
}

// decline records a 402 for attempt id: an Open attempt becomes Declined
// and its order goes back to Placed, so the shopper may pay with another
// card under a new key.
func (s *Store) decline(epoch uint64, id uuid.UUID) (models.Order, error) {
	return s.close(epoch, id, models.AttemptDeclined)
}

// abandon gives up attempt id when it is still Open and nothing was sent
// under its key after idleSince: it becomes Abandoned and its order goes
// back to Placed. abandoned is false when it was settled or resent since.
func (s *Store) abandon(epoch uint64, id uuid.UUID, idleSince time.Time) (abandoned bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if epoch != s.epoch {
		return false, ErrFenced
	}
	a := s.attemptLocked(id)
	if a == nil {
		return false, ErrUnknownOrder
	}
	if a.Status != models.AttemptOpen || a.LastSentAt.After(idleSince) {
		return false, nil
	}
	s.closeLocked(a, models.AttemptAbandoned)
	return true, nil
}

func (s *Store) close(epoch uint64, id uuid.UUID, status models.AttemptStatus) (models.Order, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if epoch != s.epoch {
		return models.Order{}, ErrFenced
	}
	a := s.attemptLocked(id)
	if a == nil {
		return models.Order{}, ErrUnknownOrder
	}
	if a.Status == models.AttemptOpen {
		s.closeLocked(a, status)
	}
	return *s.orders[a.OrderID], nil
}

// closeLocked ends Open attempt a with status; its order goes back to
// Placed. s.mu must be held.
func (s *Store) closeLocked(a *models.PaymentAttempt, status models.AttemptStatus) {
	a.Status = status
	if o := s.orders[a.OrderID]; o.Status == models.OrderPaymentPending {
		o.Status = models.OrderPlaced
	}
}

// markChecked sets LastCheckedAt of attempt id to now.
func (s *Store) markChecked(epoch uint64, id uuid.UUID, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if epoch != s.epoch {
		return ErrFenced
	}
	if a := s.attemptLocked(id); a != nil {
		a.LastCheckedAt = now
	}
	return nil
}

// openAttempts returns the Open attempts created at or before cutoff, in
// creation order (seed article 000, OpenOlderThan).
func (s *Store) openAttempts(cutoff time.Time) []models.PaymentAttempt {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []models.PaymentAttempt
	for _, a := range s.attempts {
		if a.Status == models.AttemptOpen && !a.CreatedAt.After(cutoff) {
			out = append(out, *a)
		}
	}
	return out
}

func (s *Store) openAttemptLocked(orderID int64) *models.PaymentAttempt {
	for _, a := range s.attempts {
		if a.OrderID == orderID && a.Status == models.AttemptOpen {
			return a
		}
	}
	return nil
}

func (s *Store) attemptLocked(id uuid.UUID) *models.PaymentAttempt {
	for _, a := range s.attempts {
		if a.ID == id {
			return a
		}
	}
	return nil
}
