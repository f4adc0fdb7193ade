package checkout

import "context"

// RefundOutcome is what a refund tells the merchant.
type RefundOutcome string

// The outcomes a refund answers.
const (
	// Refunded (200): the provider holds the refund.
	Refunded RefundOutcome = "Refunded"
	// RefundPending (202): the outcome is unknown; the refund intent stays
	// open and is settled by a refund of the same amount (the same key) or
	// by reconciliation.
	RefundPending RefundOutcome = "RefundPending"
	// RefundRefused (402): the provider refused it (more than is left of
	// the charge); nothing was refunded.
	RefundRefused RefundOutcome = "RefundRefused"
	// RefundFailed: nothing was refunded, or the client gave up.
	RefundFailed RefundOutcome = "RefundFailed"
)

// RefundResult is the answer of one refund. Only Outcome is required.
type RefundResult struct {
	Outcome RefundOutcome
	// RefundID is the provider's refund id when Refunded, for the report.
	RefundID string
	// Err, when set, says the call broke the contract (as Result.Err).
	Err error
}

// Refunder is a Client that refunds a paid order: a merchant giving amount
// minor units of order's charge back (a full refund when amount is the
// order's, a partial one otherwise). Every refund intent sends one
// Idempotency-Key on every try, stored before the first send, and is
// reconciled by GET /v1/refunds?merchant_reference= (docs/provider-api.md).
// A Refunder that is also a Viewer reports its refund intents in
// View.Refunds, which the refund invariants read.
type Refunder interface {
	Refund(ctx context.Context, order Order, amount int64) RefundResult
}
