package client

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/idemcheck/idemcheck/models"
)

// Store is the in-memory AttemptStore, the default: orders and payment
// attempts in maps behind one mutex, every method one critical section.
// It survives a client crash (the harness keeps it across restarts) but not
// the process.
//
// A Store is safe for concurrent use.
type Store struct {
	mu       sync.Mutex // guards all fields below
	epochs   map[string]uint64
	nextID   int64
	orders   map[int64]*models.Order
	attempts []*models.PaymentAttempt // creation order
	refunds  refundLog                // creation order (refundstore.go)
	log      changeLog                // what each change touched (storechanges.go)

	// gen counts the critical sections that may have changed an order, an
	// attempt or a refund intent (lockToChange); views is what Snapshot
	// and Refunds last returned, read at generation views.gen, handed out
	// again while nothing changed: the harness reads the store after every
	// step, and most steps change nothing in it.
	gen   uint64
	views struct {
		gen      uint64
		ok       bool
		orders   []models.Order
		attempts []models.PaymentAttempt
		refunds  []models.RefundIntent
	}
}

var _ AttemptStore = (*Store)(nil)

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{orders: make(map[int64]*models.Order), epochs: make(map[string]uint64)}
}

// Orders returns a copy of every order, by id.
func (s *Store) Orders() []models.Order {
	o, _, _ := s.Snapshot(context.Background())
	return slices.Clone(o)
}

// Attempts returns a copy of every payment attempt, in creation order.
func (s *Store) Attempts() []models.PaymentAttempt {
	_, a, _ := s.Snapshot(context.Background())
	return slices.Clone(a)
}

// Order returns order id.
func (s *Store) Order(id int64) (models.Order, bool) {
	o, err := s.LoadOrder(context.Background(), id)
	return o, err == nil
}

// Snapshot implements AttemptStore; it never fails. Until the store
// changes, every call returns the same slices (capped at their length):
// read them, never write to them.
func (s *Store) Snapshot(context.Context) ([]models.Order, []models.PaymentAttempt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.viewLocked()
	o, a := s.views.orders, s.views.attempts
	return o[:len(o):len(o)], a[:len(a):len(a)], nil
}

// viewLocked brings views up to the store's generation: a copy of every
// order (by id), attempt and refund intent (in creation order).
func (s *Store) viewLocked() {
	if s.views.ok && s.views.gen == s.gen {
		return
	}
	orders := make([]models.Order, 0, len(s.orders))
	for _, o := range s.orders {
		orders = append(orders, *o)
	}
	slices.SortFunc(orders, func(a, b models.Order) int { return cmp.Compare(a.ID, b.ID) })
	atts := make([]models.PaymentAttempt, len(s.attempts))
	for i, a := range s.attempts {
		atts[i] = *a
	}
	refunds := make([]models.RefundIntent, len(s.refunds))
	for i, r := range s.refunds {
		refunds[i] = *r
	}
	s.views.orders, s.views.attempts, s.views.refunds = orders, atts, refunds
	s.views.gen, s.views.ok = s.gen, true
}

// lockToChange locks the store for a critical section that may change an
// order, an attempt or a refund intent: the next Snapshot reads it again.
func (s *Store) lockToChange() {
	s.mu.Lock()
	s.gen++
}

// LoadOrder implements AttemptStore.
func (s *Store) LoadOrder(_ context.Context, id int64) (models.Order, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.orders[id]
	if !ok {
		return models.Order{}, ErrUnknownOrder
	}
	return *o, nil
}

// Open implements AttemptStore.
func (s *Store) Open(_ context.Context, instance string) (Epoch, error) {
	s.lockToChange()
	defer s.mu.Unlock()
	s.epochs[instance]++
	return Epoch{Instance: instance, N: s.epochs[instance]}, nil
}

// Fence implements AttemptStore.
func (s *Store) Fence(_ context.Context, e Epoch) error {
	s.lockToChange()
	defer s.mu.Unlock()
	if s.epochs[e.Instance] == e.N {
		s.epochs[e.Instance]++
	}
	return nil
}

// currentLocked reports whether e is its instance's current epoch. s.mu
// must be held.
func (s *Store) currentLocked(e Epoch) bool { return s.epochs[e.Instance] == e.N }

// OpenOrder implements AttemptStore.
func (s *Store) OpenOrder(_ context.Context, e Epoch, total int64, currency string) (models.Order, error) {
	s.lockToChange()
	defer s.mu.Unlock()
	if !s.currentLocked(e) {
		return models.Order{}, ErrFenced
	}
	s.nextID++
	o := &models.Order{ID: s.nextID, Total: total, Currency: currency, Status: models.OrderPlaced}
	s.orders[o.ID] = o
	s.touchOrder(o)
	return *o, nil
}

// GetOrStart implements AttemptStore.
func (s *Store) GetOrStart(_ context.Context, e Epoch, sp StartSpec) (Started, error) {
	s.lockToChange()
	defer s.mu.Unlock()
	if !s.currentLocked(e) {
		return Started{}, ErrFenced
	}
	o, ok := s.orders[sp.OrderID]
	if !ok {
		return Started{}, ErrUnknownOrder
	}
	if o.Status == models.OrderPaid {
		return Started{Order: *o}, ErrAlreadyPaid
	}
	open := s.openAttemptLocked(o.ID)
	if sp.IgnoreOpen || sp.NoCardGuard { // planted bugs: CallbackOwnKey, UnknownShownAsFailure
		open = s.plantedOpenLocked(o, sp)
	}
	if open != nil {
		if open.Amount == o.Total && open.Currency == o.Currency && open.CardTokenHash == sp.CardHash {
			open.LastSentAt = sp.Now // about to resend: reconciliation must wait again
			s.touchAttempt(open)
			return Started{Attempt: *open, Order: *o, Reused: true}, nil
		}
		return Started{Order: *o}, ErrAttemptConflict
	}
	a := &models.PaymentAttempt{
		ID:             sp.NewID(),
		OrderID:        o.ID,
		IdempotencyKey: sp.NewKey(),
		Amount:         o.Total,
		Currency:       o.Currency,
		CardTokenHash:  sp.CardHash,
		CreatedAt:      sp.Now,
		LastSentAt:     sp.Now,
		Status:         models.AttemptOpen,
	}
	s.newAttemptLocked(a)
	o.Status = models.OrderPaymentPending
	s.touchOrder(o)
	return Started{Attempt: *a, Order: *o}, nil
}

// Succeed implements AttemptStore.
func (s *Store) Succeed(_ context.Context, e Epoch, id uuid.UUID, chargeID string) (models.Order, error) {
	s.lockToChange()
	defer s.mu.Unlock()
	if !s.currentLocked(e) {
		return models.Order{}, ErrFenced
	}
	a := s.attemptLocked(id)
	if a == nil {
		return models.Order{}, ErrUnknownOrder
	}
	a.Status = models.AttemptSucceeded
	a.ProviderChargeID = chargeID
	s.touchAttempt(a)
	o := s.orders[a.OrderID]
	if o.Status != models.OrderPaid {
		o.Status = models.OrderPaid
		o.ProviderChargeID = chargeID
		s.touchOrder(o)
	}
	return *o, nil
}

// Abandon implements AttemptStore.
func (s *Store) Abandon(_ context.Context, e Epoch, sp AbandonSpec) (abandoned bool, err error) {
	s.lockToChange()
	defer s.mu.Unlock()
	if !s.currentLocked(e) {
		return false, ErrFenced
	}
	a := s.attemptLocked(sp.ID)
	if a == nil {
		return false, ErrUnknownOrder
	}
	if !sp.Unconditional && (a.Status != models.AttemptOpen || a.LastSentAt.After(sp.IdleSince)) { // planted bug: UnconditionalSettle
		return false, nil
	}
	s.closeLocked(a, models.AttemptAbandoned)
	return true, nil
}

// EndAttempt implements AttemptStore.
func (s *Store) EndAttempt(_ context.Context, e Epoch, id uuid.UUID, status models.AttemptStatus) (models.Order, error) {
	s.lockToChange()
	defer s.mu.Unlock()
	if !s.currentLocked(e) {
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

// closeLocked ends attempt a with status; its order goes back to Placed
// when it is PaymentPending. s.mu must be held.
func (s *Store) closeLocked(a *models.PaymentAttempt, status models.AttemptStatus) {
	a.Status = status
	s.touchAttempt(a)
	if o := s.orders[a.OrderID]; o.Status == models.OrderPaymentPending {
		o.Status = models.OrderPlaced
		s.touchOrder(o)
	}
}

// MarkChecked implements AttemptStore.
func (s *Store) MarkChecked(_ context.Context, e Epoch, id uuid.UUID, now time.Time) error {
	s.lockToChange()
	defer s.mu.Unlock()
	if !s.currentLocked(e) {
		return ErrFenced
	}
	if a := s.attemptLocked(id); a != nil {
		a.LastCheckedAt = now
		s.touchAttempt(a)
	}
	return nil
}

// OpenAttempts implements AttemptStore.
func (s *Store) OpenAttempts(_ context.Context, cutoff time.Time) ([]models.PaymentAttempt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []models.PaymentAttempt
	for _, a := range s.attempts {
		if a.Status == models.AttemptOpen && !a.CreatedAt.After(cutoff) {
			out = append(out, *a)
		}
	}
	return out, nil
}

// SetKey implements AttemptStore.
func (s *Store) SetKey(_ context.Context, e Epoch, id uuid.UUID, key string) error {
	s.lockToChange()
	defer s.mu.Unlock()
	if !s.currentLocked(e) {
		return ErrFenced
	}
	if a := s.attemptLocked(id); a != nil && a.IdempotencyKey == "" {
		a.IdempotencyKey = key
		s.touchAttempt(a)
	}
	return nil
}

func (s *Store) openAttemptLocked(orderID int64) *models.PaymentAttempt {
	for _, a := range s.attempts {
		if a.OrderID == orderID && a.Status == models.AttemptOpen {
			return a
		}
	}
	return nil
}

// plantedOpenLocked is the open attempt GetOrStart considers under a planted
// bug: none (CallbackOwnKey), or only one with the same card and amount
// (UnknownShownAsFailure), so that no open attempt is ever a conflict.
// s.mu must be held.
func (s *Store) plantedOpenLocked(o *models.Order, sp StartSpec) *models.PaymentAttempt {
	if sp.IgnoreOpen { // planted bug: CallbackOwnKey
		return nil
	}
	for _, a := range s.attempts { // planted bug: UnknownShownAsFailure
		if a.OrderID == o.ID && a.Status == models.AttemptOpen && a.Amount == o.Total &&
			a.Currency == o.Currency && a.CardTokenHash == sp.CardHash {
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
