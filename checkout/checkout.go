// Package checkout is what a checkout team implements to have idemcheck
// certify its client: a Client that checks out an order and runs its
// reconciliation once, plus optional capabilities (Restarter, Callback,
// Viewer, Placer) found by type assertion. conformance.CheckClient runs the
// property against it; docs/client-api.md is the same contract over HTTP,
// for a client in any language.
//
// The package is named after what the team owns — its checkout — and
// holds nothing but the contract, so that it is the first page a team
// reads; it imports only models (the order and attempt types the
// invariants read).
//
// What each capability unlocks:
//   - Client alone: everything the wire shows is judged — one key per
//     merchant reference, keys well formed, no unsafe retries, a 409 or a
//     timeout never answered to the shopper as final, at most one charge
//     per order, and the provider's own invariants.
//   - Viewer: the invariants that need the client's own view — the key
//     on the wire is the stored one, an open attempt keeps its order
//     PaymentPending, books-balance, reconciliation-converges — and the
//     probes of settled keys. Without it they are reported "not judged",
//     never PASS.
//   - Restarter: the crash-restart and crash-during-checkout actions (the
//     key must survive a crash: stored before the first send).
//   - Callback: the payment-ready callback racing the shopper's return.
//   - Placer: the client numbers its own orders; else the harness does.
//   - Refunder: the merchant's refund action, judged by
//     at-most-one-refund-per-intent and books-balance (refund.go).
package checkout

import (
	"context"
	"net/http"
	"time"

	"github.com/idemcheck/idemcheck/models"
)

// Order is what the shopper pays for: the harness's order id, the amount
// in minor units of Currency (548.90 TRY is 54890) and the ISO 4217 code.
// The client sends it as one intent, merchant_reference
// "bookstore-<ID>-<attempt id as 32 hex digits>" (docs/provider-api.md).
type Order struct {
	ID       int64
	Amount   int64
	Currency string
}

// Outcome is what a checkout tells the shopper (seed article 000, the
// checkout endpoint's 200 / 202 / 402 / 503).
type Outcome string

// The outcomes a checkout answers.
const (
	// Paid (200): the provider answered 2xx; the order is paid.
	Paid Outcome = "Paid"
	// Pending (202): the outcome is unknown (a timeout, a reset, a 409, a
	// 500/502/504) or a previous attempt is still being verified; the
	// attempt stays open and is settled by a retry with the same key or
	// by reconciliation.
	Pending Outcome = "PaymentPending"
	// Declined (402): the provider answered 402; nothing was charged.
	Declined Outcome = "Declined"
	// Failed (503): nothing was charged or the client gave up (429/503
	// only, nothing sent, an unknown order, a bug).
	Failed Outcome = "Failed"
)

// Status is the HTTP status a checkout endpoint answers with o: 200, 202,
// 402 or 503 (0 for an unknown outcome).
func (o Outcome) Status() int {
	switch o {
	case Paid:
		return http.StatusOK
	case Pending:
		return http.StatusAccepted
	case Declined:
		return http.StatusPaymentRequired
	case Failed:
		return http.StatusServiceUnavailable
	}
	return 0
}

// Result is the answer of one checkout. Only Outcome is required.
type Result struct {
	Outcome Outcome
	// Status is the HTTP status the shop answered, if it differs from
	// Outcome.Status() (the reference client answers 409 for a previous
	// payment still being verified); 0 means Outcome.Status().
	Status int
	// ChargeID is the provider's charge id when Paid, for the report.
	ChargeID string
	// AttemptID is the payment attempt used, for the report.
	AttemptID string
	// Err, when set, says the call broke the contract: an adapter's
	// "no answer within 2s" or "answered garbage" (sut/service). The run
	// then fails on client-api. A client's own trouble (the provider is
	// down) is an Outcome, not an Err.
	Err error
}

// Client is a checkout under test. Its methods may be called from several
// goroutines at once (a double click is 2–4 concurrent Checkouts of one
// order); every request it sends must carry the ctx it was given, so the
// harness can tell which shopper step sent it.
type Client interface {
	// Checkout pays order with cardToken (tok_visa, tok_mastercard,
	// tok_chargeDeclined) as one shopper click, and returns what the
	// shopper sees. The first Checkout of an order places it.
	Checkout(ctx context.Context, order Order, cardToken string) Result
	// Reconcile runs the client's reconciliation job once, now (Env.Now),
	// and says what it did in a few words, for the report. An error is a
	// broken contract (the run fails on client-api): a provider that does
	// not answer is what reconciliation is for, not an error.
	Reconcile(ctx context.Context) (string, error)
}

// Restarter is a Client that can crash and start again from its durable
// store.
type Restarter interface {
	// Restart kills the process now — every call in flight is abandoned
	// and nothing it does afterwards may reach the durable store — and
	// starts a new one from that store.
	Restart(ctx context.Context) error
}

// Callback is a Client with a "payment ready" path (a webhook or a
// redirect handler) that may race the shopper's own return.
type Callback interface {
	PaymentReady(ctx context.Context, order Order, cardToken string) Result
}

// Viewer is a Client that reports its own view: every order and every
// payment attempt it holds, with keys and states. Attempts' references
// must be what they sent as merchant_reference (models.AttemptReference);
// card tokens appear only as models.CardHash.
type Viewer interface {
	View(ctx context.Context) (View, error)
}

// View is a client's own state at one moment.
type View struct {
	Orders   []models.Order
	Attempts []models.PaymentAttempt
	// Refunds are the refund intents of a Refunder, in creation order.
	Refunds []models.RefundIntent
}

// Placer is a Client that numbers its own orders: the harness places each
// order before its first checkout and uses the id it returns.
type Placer interface {
	PlaceOrder(ctx context.Context, amount int64, currency string) (int64, error)
}

// Env is what the harness hands a client's constructor for one sequence.
// A client under test must send through HTTPClient (the fault transport:
// that is where timeouts, lost responses and resets happen and where the
// harness reads the wire) and read time from Now (virtual time: a 30-minute
// AbandonAfter passes in microseconds; timers and time.Now inside the
// harness's bubble are virtual too, so failsafe-go's timeouts just work).
type Env struct {
	// BaseURL is the provider's base URL (POST /v1/charges, GET
	// /v1/charges?merchant_reference=; docs/provider-api.md), or, under
	// conformance.WithDialect("stripe"), Stripe's API as its SDKs call it:
	// point the SDK's base URL here.
	BaseURL string
	// HTTPClient is the only way to the provider.
	HTTPClient *http.Client
	// Now is the run's clock.
	Now func() time.Time
	// NewKey returns a fresh UUIDv7 string from a deterministic stream, so
	// a replay sends the same keys; a client may ignore it and use its own
	// (then a report's keys differ from its replay's).
	NewKey func() string
	// APIKey is the credential the client must authenticate with, as
	// "Authorization: Bearer <APIKey>" (an SDK's secret key): the
	// harness's own probes of the client's keys send the Authorization the
	// client last sent (none if it sends none), so the provider keeps them
	// in the client's account (keys are scoped per account: IETF
	// idempotency-key draft §2, docs/provider-api.md). Against the
	// embedded provider it is a fixed test key (sk_test_…); "" against a
	// provider URL, whose wire sends the configured IDEMCHECK_API_KEY on
	// every request itself.
	APIKey string
}

// New builds a client for one sequence: it must start with no orders and
// no attempts.
type New func(Env) (Client, error)
