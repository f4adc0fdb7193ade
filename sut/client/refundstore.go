package client

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/idemcheck/idemcheck/models"
)

// ErrRefundConflict: the order has an open refund intent of another
// amount, whose outcome is still unknown; a second one could refund twice.
var ErrRefundConflict = errors.New("client: a previous refund of this order is still being verified")

// RefundStore is the optional refunds part of an AttemptStore: refund
// intents, each with its key stored before its first send, surviving a
// crash like payment attempts. The in-memory Store implements it;
// sut/client/pgstore does not yet (Client.Refund then fails, nothing
// sent). Every method is atomic and fenced by the epoch, as AttemptStore's.
type RefundStore interface {
	// StartRefund returns the order's Open refund intent when its amount
	// is sp.Amount (reused: its LastSentAt becomes sp.Now), fails with
	// ErrRefundConflict when the open one has another amount, and otherwise
	// stores a new Open intent with its key.
	StartRefund(ctx context.Context, e Epoch, sp RefundSpec) (intent models.RefundIntent, reused bool, err error)
	// SettleRefund ends Open intent id with status (Succeeded with the
	// provider's refundID, or Refused); a Succeeded answer is the
	// provider's truth and is recorded over any status.
	SettleRefund(ctx context.Context, e Epoch, id uuid.UUID, status models.RefundStatus, refundID string) error
	// AbandonRefund makes intent id Abandoned when it is still Open and was
	// last sent at or before idleSince (one conditional update, so a resend
	// racing reconciliation is never abandoned); abandoned says whether it was.
	AbandonRefund(ctx context.Context, e Epoch, id uuid.UUID, idleSince time.Time) (abandoned bool, err error)
	// OpenRefunds returns the Open intents last sent at or before cutoff,
	// in creation order.
	OpenRefunds(ctx context.Context, cutoff time.Time) ([]models.RefundIntent, error)
	// Refunds returns every refund intent, in creation order.
	Refunds(ctx context.Context) ([]models.RefundIntent, error)
}

// RefundSpec is what StartRefund needs.
type RefundSpec struct {
	OrderID int64
	Charge  string // the order's charge id
	Amount  int64  // minor units
	Now     time.Time
	NewID   func() uuid.UUID
	NewKey  func() string
}

// refundLog is the in-memory Store's refund intents, guarded by Store.mu.
type refundLog []*models.RefundIntent

var _ RefundStore = (*Store)(nil)

// StartRefund implements RefundStore.
func (s *Store) StartRefund(_ context.Context, e Epoch, sp RefundSpec) (models.RefundIntent, bool, error) {
	s.lockToChange()
	defer s.mu.Unlock()
	if !s.currentLocked(e) {
		return models.RefundIntent{}, false, ErrFenced
	}
	for i, r := range s.refunds {
		if r.OrderID == sp.OrderID && r.Status == models.RefundOpen {
			if r.Amount != sp.Amount {
				return *r, false, ErrRefundConflict
			}
			r.LastSentAt = sp.Now
			s.touchIntent(i)
			return *r, true, nil
		}
	}
	r := &models.RefundIntent{
		ID: sp.NewID(), OrderID: sp.OrderID, Charge: sp.Charge, IdempotencyKey: sp.NewKey(),
		Amount: sp.Amount, CreatedAt: sp.Now, LastSentAt: sp.Now, Status: models.RefundOpen,
	}
	s.refunds = append(s.refunds, r)
	s.touchIntent(len(s.refunds) - 1)
	return *r, false, nil
}

// SettleRefund implements RefundStore.
func (s *Store) SettleRefund(_ context.Context, e Epoch, id uuid.UUID, status models.RefundStatus, refundID string) error {
	s.lockToChange()
	defer s.mu.Unlock()
	if !s.currentLocked(e) {
		return ErrFenced
	}
	for i, r := range s.refunds {
		if r.ID == id && (r.Status == models.RefundOpen || status == models.RefundSucceeded) {
			r.Status, r.ProviderRefundID = status, refundID
			s.touchIntent(i)
		}
	}
	return nil
}

// AbandonRefund implements RefundStore.
func (s *Store) AbandonRefund(_ context.Context, e Epoch, id uuid.UUID, idleSince time.Time) (bool, error) {
	s.lockToChange()
	defer s.mu.Unlock()
	if !s.currentLocked(e) {
		return false, ErrFenced
	}
	for i, r := range s.refunds {
		if r.ID == id && r.Status == models.RefundOpen && !r.LastSentAt.After(idleSince) {
			r.Status = models.RefundAbandoned
			s.touchIntent(i)
			return true, nil
		}
	}
	return false, nil
}

// OpenRefunds implements RefundStore.
func (s *Store) OpenRefunds(_ context.Context, cutoff time.Time) ([]models.RefundIntent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []models.RefundIntent
	for _, r := range s.refunds {
		if r.Status == models.RefundOpen && !r.LastSentAt.After(cutoff) {
			out = append(out, *r)
		}
	}
	return out, nil
}

// Refunds implements RefundStore: every refund intent, in creation order.
// Until the store changes, every call returns the same slice (capped at
// its length): read it, never write to it.
func (s *Store) Refunds(context.Context) ([]models.RefundIntent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.viewLocked()
	r := s.views.refunds
	return r[:len(r):len(r)], nil
}
