package check

import (
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/idemcheck/idemcheck/models"
)

// The invariant names of docs/invariants.md; they are part of the public surface.
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
	EquivalentRequestsAgree = "equivalent-requests-agree"
	KeyScopedPerAccount     = "key-scoped-per-account"
)

// World is what an invariant reads: the history so far, the client's
// durable state and the provider's truth, at one moment.
type World struct {
	History  models.Snapshot
	Orders   []models.Order
	Attempts []models.PaymentAttempt
	// Charges is the provider's truth: every charge it holds for the
	// client's account (merchant A).
	Charges []models.Charge
	// OtherCharges is the provider's charges for the second merchant (B),
	// whose probes reuse A's keys (probe_shapes.go); nil when the provider
	// under test serves one account.
	OtherCharges []models.Charge
	// Declines is how many declines the provider processed (a side
	// effect, declines.go); -1 when it does not say, and 0 in
	// a World built by hand, which judges nothing.
	Declines int
	// Retention is the provider's published retention window.
	Retention time.Duration
	// Killable is true for a provider whose process can be killed while it
	// holds a key (faults.KindProviderCrash): the key may then answer 409
	// until the next time jump, before which the harness waits out the
	// lock's lease in real time, and must be free after it.
	Killable bool
	// Now is the (virtual) time of the snapshot.
	Now time.Time
	// Refunds is the provider's refunds and RefundIntents the client's,
	// when RefundsJudged: the provider's refunds are known (in process).
	Refunds       []models.Refund
	RefundIntents []models.RefundIntent
	RefundsJudged bool
	// State, when not nil, says what changed in Orders, Attempts,
	// RefundIntents and Charges since the World of generation
	// State.Follows: a Checker that judged that World last reads only
	// those elements (state.go). Nil: compare every element.
	State *StateDelta

	memo *memo // what several invariants derive from the history, computed once
}

// memo caches what the invariants derive from one World.
type memo struct {
	posts, clientPosts []models.Exchange
	names              *names
	verdicts           []specVerdict
	done               [3]bool // posts, clientPosts, verdicts
}

// Shared is w with one cache of what the invariants derive from its
// history (its creates, the specification's verdicts), which every
// Evaluate and Coverage of the returned World then shares instead of
// deriving it again. The World must not change while it is shared.
func (w World) Shared() World {
	if w.memo == nil {
		w.memo = &memo{}
	}
	return w
}

func (w World) m() *memo {
	if w.memo == nil {
		return &memo{} // a World built by hand: no sharing, still correct
	}
	return w.memo
}

// Finding is what an invariant check found: the zero value when it holds.
// Message names the invariant first and says exactly what broke ("one-key-
// per-intent: order 1 intent 1 sent 2 distinct keys"); Category is the same
// sentence with the particulars left out ("one-key-per-intent: … sent …
// distinct keys"). Both are deterministic for a given history (no
// wall-clock time, no map order). rapid keeps a shrunk sequence only when
// it fails with the same error, so the failure it sees is the Category:
// "order 2" can then shrink to "order 1".
type Finding struct {
	Message  string
	Category string
}

// Holds reports whether f found nothing.
func (f Finding) Holds() bool { return f.Message == "" }

// Invariant is one named check over a World.
type Invariant struct {
	Name string
	// Liveness invariants are checked once, after faults heal and time
	// passes; safety invariants after every step.
	Liveness bool
	// Doc says what the invariant promises, in one sentence.
	Doc   string
	Check func(w World) Finding

	// step, when set, is Check in the Checker's incremental form: the
	// same first violation, judged over what the last step added. A copy
	// whose Check was replaced is judged by its Check (NewChecker).
	step func(c *Checker, w World) Finding
}

// Safety lists the safety invariants in the order they are checked; the
// first that fails names the failure. Protocol rules come first, because
// they name a cause (the client sent two keys; the provider did not replay),
// and the money outcomes last, because they name its consequence (two
// charges; books that do not balance).
func Safety() []Invariant {
	return []Invariant{
		{Name: KeyFormat, Doc: "every create carries the key, as a Structured Field String holding a UUID", Check: checkKeyFormat, step: (*Checker).stepKeyFormat},
		{Name: OneKeyPerIntent, Doc: "every POST for one payment intent carries the same Idempotency-Key, two intents never share one, and the key survives a crash", Check: checkOneKeyPerIntent, step: (*Checker).stepOneKeyPerIntent},
		{Name: NoUnsafeRetry, Doc: "a POST without a key is never retried; 400 and 422 are never retried", Check: checkNoUnsafeRetry, step: (*Checker).stepNoUnsafeRetry},
		{Name: NoStaleKey, Doc: "no POST carries a key first sent longer ago than the provider's retention window", Check: checkNoStaleKey, step: (*Checker).stepNoStaleKey},
		{Name: ConflictNeverFinal, Doc: "a 409, timeout or 5xx is an unknown outcome: the attempt stays open and the order PaymentPending", Check: checkConflictNeverFinal, step: (*Checker).stepConflictNeverFinal},
		{Name: EquivalentRequestsAgree, Doc: "one request sent in another shape under its key (trailing slash, unrelated query parameter, fields in another order, other whitespace) gets the first answer or a refusal, never a second charge nor a 422", Check: checkEquivalentRequests, step: (*Checker).stepEquivalentRequests},
		{Name: KeyScopedPerAccount, Doc: "a key one account used never gives another account its stored response, never blocks it (409/422), and each account's charges are its own", Check: checkKeyScopedPerAccount, step: (*Checker).stepKeyScopedPerAccount},
		{Name: ReplayConsistent, Doc: "a completed key answers with the first response's status and body; a key in flight answers 409", Check: checkReplayConsistent, step: (*Checker).stepReplayConsistent},
		{Name: MismatchRejected, Doc: "the same key with another body is refused with 422 and creates nothing", Check: checkMismatchRejected, step: (*Checker).stepMismatchRejected},
		{Name: KeyScopedPerEndpoint, Doc: "a charge's key sent to /v1/refunds is refused or kept apart: never the charge's stored response, never 409 once the charge finished", Check: checkKeyScopedPerEndpoint, step: (*Checker).stepKeyScopedPerEndpoint},
		{Name: AtMostOneChargePerOrder, Doc: "the provider never holds two successful charges for one order", Check: checkAtMostOneCharge, step: (*Checker).stepAtMostOneCharge},
		{Name: AtMostOneRefundPerIntent, Doc: "the provider holds at most one refund per refund intent, and none for an intent the client settled as not refunded", Check: checkAtMostOneRefund, step: (*Checker).stepAtMostOneRefund},
		{Name: BooksBalance, Doc: "every Succeeded attempt has exactly one provider charge with its amount and currency, and every charge belongs to an attempt that is Succeeded or still Open; never more refunded than charged, and every Succeeded refund intent has its refund", Check: checkBooksWithRefunds, step: (*Checker).stepBooksBalance},
	}
}

// Liveness lists the invariants checked once faults heal and time passes
// AbandonAfter plus the reconciliation interval.
func Liveness() []Invariant {
	return []Invariant{
		{Name: ReconciliationConverges, Liveness: true, Doc: "no attempt is left Open and an order is Paid exactly when the provider holds its charge", Check: checkConvergesWithRefunds},
	}
}

// ErrViolation is the sentinel every *ViolationError wraps.
var ErrViolation = errors.New("idemcheck: invariant violated")

// ViolationError is a broken invariant with its deterministic message and
// category (see Finding).
type ViolationError struct {
	Invariant string
	Message   string
	Category  string
}

func (e *ViolationError) Error() string { return e.Message }

// Unwrap makes errors.Is(err, ErrViolation) hold.
func (e *ViolationError) Unwrap() error { return ErrViolation }

// Evaluate runs invs over the whole of w in order and returns the first
// violation, or nil: the whole-history verdict (see Checker for the
// incremental one).
func Evaluate(w World, invs []Invariant) *ViolationError {
	if w.memo == nil {
		w.memo = &memo{}
	}
	for _, inv := range invs {
		if f := inv.Check(w); !f.Holds() {
			return &ViolationError{Invariant: inv.Name, Message: f.Message, Category: f.Category}
		}
	}
	return nil
}

// Violation is the Finding of invariant name: format filled with args
// (fmt.Sprintf), and format with every verb shown as "…" as its category.
func Violation(name, format string, args ...any) Finding {
	return Finding{
		Message:  name + ": " + fmt.Sprintf(format, args...),
		Category: name + ": " + verb.ReplaceAllString(format, "…"),
	}
}

var verb = regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z]`)

// providerOnly are the invariants about the provider alone: against a
// provider whose answers the harness programs (WireMock), they would judge
// the harness, so such runs leave them out (see sut/wiremock).
var providerOnly = map[string]bool{ReplayConsistent: true, MismatchRejected: true, EquivalentRequestsAgree: true, KeyScopedPerAccount: true}

// ProviderOnly is the names of the provider-only invariants, sorted.
func ProviderOnly() []string {
	return []string{EquivalentRequestsAgree, KeyScopedPerAccount, MismatchRejected, ReplayConsistent}
}

// WithoutProviderOnly is invs without the provider-only invariants.
func WithoutProviderOnly(invs []Invariant) []Invariant {
	var out []Invariant
	for _, inv := range invs {
		if !providerOnly[inv.Name] {
			out = append(out, inv)
		}
	}
	return out
}
