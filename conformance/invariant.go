package conformance

import (
	"errors"
	"fmt"
	"time"

	"github.com/idemcheck/idemcheck/models"
)

// The invariant names of DESIGN.md; they are part of the public surface.
const (
	OneKeyPerIntent         = "one-key-per-intent"
	AtMostOneChargePerOrder = "at-most-one-charge-per-order"
	ConflictNeverFinal      = "409-never-final"
	NoUnsafeRetry           = "no-unsafe-retry"
	KeyFormat               = "key-format"
	ReplayConsistent        = "replay-consistent"
	MismatchRejected        = "mismatch-rejected"
	BooksBalance            = "books-balance"
	ReconciliationConverges = "reconciliation-converges"
)

// World is what an invariant reads: the history so far, the client's
// durable state and the provider's truth, at one moment.
type World struct {
	History  models.Snapshot
	Orders   []models.Order
	Attempts []models.PaymentAttempt
	// Charges is the provider's truth: every charge it holds.
	Charges []models.Charge
	// Retention is the provider's published retention window.
	Retention time.Duration
	// Now is the (virtual) time of the snapshot.
	Now time.Time
}

// Invariant is one named check over a World. Check returns a violation
// message starting with the invariant's name, or "" when it holds. Messages
// are deterministic for a given history (no wall-clock time, no map order),
// which rapid needs to shrink.
type Invariant struct {
	Name string
	// Liveness invariants are checked once, after faults heal and time
	// passes; safety invariants after every step.
	Liveness bool
	// Doc says what the invariant promises, in one sentence.
	Doc   string
	Check func(w World) string
}

// Safety lists the safety invariants in the order they are checked; the
// first that fails names the failure.
func Safety() []Invariant {
	return []Invariant{
		{Name: OneKeyPerIntent, Doc: "every POST for one payment intent carries the same Idempotency-Key, two intents never share one, and the key survives a crash", Check: checkOneKeyPerIntent},
		{Name: AtMostOneChargePerOrder, Doc: "the provider never holds two successful charges for one order", Check: checkAtMostOneCharge},
		{Name: ConflictNeverFinal, Doc: "a 409, timeout or 5xx is an unknown outcome: the attempt stays open and the order PaymentPending", Check: checkConflictNeverFinal},
		{Name: NoUnsafeRetry, Doc: "a POST without a key is never retried; 400 and 422 are never retried", Check: checkNoUnsafeRetry},
		{Name: KeyFormat, Doc: "the key is sent as a Structured Field String holding a UUID", Check: checkKeyFormat},
		{Name: ReplayConsistent, Doc: "a completed key answers with the first response's status and body; a key in flight answers 409", Check: checkReplayConsistent},
		{Name: MismatchRejected, Doc: "the same key with another body is refused with 422 and creates nothing", Check: checkMismatchRejected},
		{Name: BooksBalance, Doc: "every Succeeded attempt has exactly one provider charge with its amount and currency, and every charge belongs to an attempt that is Succeeded or still Open", Check: checkBooksBalance},
	}
}

// Liveness lists the invariants checked once faults heal and time passes
// AbandonAfter plus the reconciliation interval.
func Liveness() []Invariant {
	return []Invariant{
		{Name: ReconciliationConverges, Liveness: true, Doc: "no attempt is left Open and an order is Paid exactly when the provider holds its charge", Check: checkConverges},
	}
}

// ErrViolation is the sentinel every *ViolationError wraps.
var ErrViolation = errors.New("idemcheck: invariant violated")

// ViolationError is a broken invariant with its deterministic message.
type ViolationError struct {
	Invariant string
	Message   string
}

func (e *ViolationError) Error() string { return e.Message }

// Unwrap makes errors.Is(err, ErrViolation) hold.
func (e *ViolationError) Unwrap() error { return ErrViolation }

// Evaluate runs invs over w in order and returns the first violation, or nil.
func Evaluate(w World, invs []Invariant) *ViolationError {
	for _, inv := range invs {
		if msg := inv.Check(w); msg != "" {
			return &ViolationError{Invariant: inv.Name, Message: msg}
		}
	}
	return nil
}

func violation(name, format string, args ...any) string {
	return name + ": " + fmt.Sprintf(format, args...)
}
