package client

import (
	"context"
	"errors"
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
	// ErrUnknownOrder: no order (or attempt) has the id.
	ErrUnknownOrder = errors.New("client: unknown order")
	// ErrFenced: the write came from a client whose epoch is stale (it
	// crashed, or a newer client of the same instance opened the store) and
	// was dropped.
	ErrFenced = errors.New("client: stale epoch, store write dropped")
	// ErrAlreadyPaid: the order was paid before an attempt could start.
	ErrAlreadyPaid = errors.New("client: order already paid")
)

// AttemptStore is the durable part of the reference client: orders and
// payment attempts, which survive a client crash, so that a new Client
// opened on the store resends the stored keys (seed article 000: the
// attempt is written in the same transaction as the order's move to
// PaymentPending, before the first send — the outbox idea). Store (in
// memory) is the default; sut/client/pgstore keeps them in PostgreSQL.
//
// Every write carries the Epoch of the client instance that makes it; Open
// bumps the instance's epoch, and Fence ends it, so writes from a crashed or
// superseded process of that instance fail with ErrFenced and change
// nothing. Several instances (distinct Config.Instance) write side by side.
//
// Implementations are safe for concurrent use; every method is atomic (one
// critical section or one transaction). ctx bounds the call; the client
// passes a context that a crash does not cancel, so fencing — not the
// cancellation — decides what a dying process may still write.
type AttemptStore interface {
	// Open starts a new epoch of instance, fencing every earlier client of
	// that instance, and returns it.
	Open(ctx context.Context, instance string) (Epoch, error)
	// Fence ends epoch e if it is still its instance's current one.
	Fence(ctx context.Context, e Epoch) error
	// OpenOrder stores a new Placed order with the next id (1, 2, 3...).
	OpenOrder(ctx context.Context, e Epoch, total int64, currency string) (models.Order, error)
	// LoadOrder returns order id, or ErrUnknownOrder.
	LoadOrder(ctx context.Context, id int64) (models.Order, error)
	// GetOrStart returns the order's open attempt when its amount and card
	// hash match (Started.Reused), fails with ErrAttemptConflict when the
	// open attempt has another card or amount, and otherwise stores a new
	// Open attempt with its key and moves the order to PaymentPending,
	// atomically (seed article 000, PaymentAttemptStore.GetOrStart). A
	// reused attempt's LastSentAt becomes sp.Now. The amount and currency
	// are the order's. A Paid order yields ErrAlreadyPaid with the order.
	GetOrStart(ctx context.Context, e Epoch, sp StartSpec) (Started, error)
	// Succeed records that the provider holds charge chargeID for attempt
	// id: the attempt becomes Succeeded and its order Paid. A 201 is the
	// provider's truth, so it is recorded even over an Abandoned attempt;
	// an order already Paid keeps its first charge id.
	Succeed(ctx context.Context, e Epoch, id uuid.UUID, chargeID string) (models.Order, error)
	// EndAttempt ends attempt id with status (Declined, or Abandoned by a planted
	// bug) if it is still Open; its order goes back to Placed. It returns
	// the order as stored after the call.
	EndAttempt(ctx context.Context, e Epoch, id uuid.UUID, status models.AttemptStatus) (models.Order, error)
	// Abandon gives up attempt a.ID when it is still Open and nothing was
	// sent under its key after a.IdleSince — one conditional update, so two
	// reconcilers (or a reconciler and a shopper resending the key) cannot
	// settle it twice: it becomes Abandoned and its order goes back to
	// Placed. abandoned is false when it was settled or resent since.
	Abandon(ctx context.Context, e Epoch, a AbandonSpec) (abandoned bool, err error)
	// MarkChecked sets LastCheckedAt of attempt id to now.
	MarkChecked(ctx context.Context, e Epoch, id uuid.UUID, now time.Time) error
	// OpenAttempts returns the Open attempts created at or before cutoff,
	// in creation order (seed article 000, OpenOlderThan).
	OpenAttempts(ctx context.Context, cutoff time.Time) ([]models.PaymentAttempt, error)
	// SetKey stores key as attempt id's idempotency key if it has none yet
	// (planted bug: KeyAfterSend; the reference stores the key with the
	// attempt).
	SetKey(ctx context.Context, e Epoch, id uuid.UUID, key string) error
	// Snapshot returns every order (by id) and every attempt (in creation
	// order), read at one instant.
	Snapshot(ctx context.Context) ([]models.Order, []models.PaymentAttempt, error)
}

// Epoch identifies one client process of one instance over a store: a
// write is accepted only while N is the instance's current epoch.
type Epoch struct {
	// Instance is Config.Instance ("" for a single-instance deployment).
	Instance string
	// N counts the opens of the instance, from 1.
	N uint64
}

// StartSpec is what GetOrStart needs to start a new attempt.
type StartSpec struct {
	OrderID  int64
	CardHash string    // models.CardHash of the card token
	Now      time.Time // CreatedAt and LastSentAt
	NewID    func() uuid.UUID
	NewKey   func() string
	// Planted bugs (planted.go); both false in the reference client.
	IgnoreOpen  bool // planted bug: CallbackOwnKey (no open attempt is considered)
	NoCardGuard bool // planted bug: UnknownShownAsFailure (only a matching open attempt is considered)
}

// Started is what GetOrStart returns.
type Started struct {
	Attempt models.PaymentAttempt
	Order   models.Order // after the call
	Reused  bool         // the open attempt was reused, not created
}

// AbandonSpec is what Abandon needs.
type AbandonSpec struct {
	ID        uuid.UUID
	IdleSince time.Time // abandon only when LastSentAt is at or before it
	// Unconditional (planted bug: UnconditionalSettle) overwrites the
	// attempt whatever its status and LastSentAt are now.
	Unconditional bool
}
