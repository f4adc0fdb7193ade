package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/idemcheck/idemcheck/models"
)

// ErrCrashed: the client crashed (Client.Crash) before or during the call;
// nothing it did afterwards reached the store.
var ErrCrashed = errors.New("client: crashed")

// Outcome is what a checkout tells the shopper.
type Outcome string

// The checkout outcomes and the HTTP status the seed's endpoint answers
// with each (seed article 000, CheckoutService and its endpoint).
const (
	// OutcomePaid (200): the provider holds a charge for the order.
	OutcomePaid Outcome = "Paid"
	// OutcomePaymentPending (202): the outcome is unknown; the attempt
	// stays Open and a retry with the same card resends its key.
	OutcomePaymentPending Outcome = "PaymentPending"
	// OutcomeDeclined (402): the card was declined; the order is Placed again.
	OutcomeDeclined Outcome = "Declined"
	// OutcomePreviousPaymentBeingVerified (409): an open attempt with
	// another card or amount exists; nothing was sent.
	OutcomePreviousPaymentBeingVerified Outcome = "PreviousPaymentBeingVerified"
	// OutcomeUnavailable (503): nothing was charged (only 429/503 answers,
	// the breaker is open, or nothing could be sent); the attempt stays
	// Open and its key is kept for a retry.
	OutcomeUnavailable Outcome = "Unavailable"
	// OutcomeFailed (500, or 404 for an unknown order): a contract
	// violation, an unknown order, or a crashed client.
	OutcomeFailed Outcome = "Failed"
)

// CheckoutResult is the answer of one Checkout call.
type CheckoutResult struct {
	Outcome Outcome
	// HTTPStatus is the status the shop's endpoint would answer: 200, 202,
	// 402, 409, 503, 500 or 404.
	HTTPStatus int
	// Order is the order as the store holds it after the call.
	Order models.Order
	// AttemptID is the payment attempt used (canonical UUID form); empty
	// when none was.
	AttemptID string
	// ChargeID is the provider's charge id when Paid.
	ChargeID string
	// DeclineCode is the provider's decline_code when Declined.
	DeclineCode string
	// Err says why the order is not Paid; nil when it is, or when Declined.
	Err error
}

// Client is the reference client of seed article 000: a checkout service
// over an attempt store, a provider gateway with a resilience pipeline, and
// a reconciliation job. It is safe for concurrent use; concurrent
// checkouts of one order with one card share one attempt and one key.
type Client struct {
	cfg     Config
	store   *Store
	epoch   uint64
	gw      *gateway
	life    context.Context // cancelled by Crash
	die     context.CancelFunc
	crashed atomic.Bool
	unsaved unsavedKeys // planted bug: KeyAfterSend
}

// New returns a client with cfg's defaults applied, and opens store: it
// starts a new store epoch, so that writes from any earlier client on the
// same store (a crashed process) are dropped.
func New(cfg Config, store *Store) *Client {
	cfg = cfg.withDefaults()
	life, die := context.WithCancel(context.Background())
	return &Client{
		cfg:   cfg,
		store: store,
		epoch: store.open(),
		gw:    &gateway{baseURL: strings.TrimRight(cfg.BaseURL, "/"), apiKey: cfg.APIKey, p: newPipeline(cfg)},
		life:  life,
		die:   die,
	}
}

// Store returns the store the client writes to.
func (c *Client) Store() *Store { return c.store }

// Crash simulates the process dying: it cancels every in-flight call of
// this client and fences its store epoch, so that nothing this client does
// afterwards writes to the store. A new client opened on the same store
// carries on with the stored attempts and keys.
func (c *Client) Crash() {
	c.crashed.Store(true)
	c.store.fence(c.epoch)
	c.die()
}

// OpenOrder stores a new Placed order of total minor units of currency and
// returns it; ids are 1, 2, 3... per store. A crashed client stores nothing
// and returns the zero Order.
func (c *Client) OpenOrder(total int64, currency string) models.Order {
	o, err := c.store.openOrder(c.epoch, total, currency)
	if err != nil {
		return models.Order{}
	}
	return o
}

// Checkout pays order orderID with cardToken (seed article 000,
// CheckoutService). It reuses the order's open attempt when the card and
// amount match, or starts one — stored, with its key, before the first
// send — and charges it through the gateway. Every request carries ctx.
// The token is sent to the provider and nowhere else; only its SHA-256 is
// stored.
func (c *Client) Checkout(ctx context.Context, orderID int64, cardToken string) CheckoutResult {
	return c.checkout(ctx, orderID, cardToken, false)
}

// PaymentReady is the "payment ready" callback path (a webhook or a redirect
// handler) that may race the shopper's own return: in the reference client it
// is the same Checkout — GetOrStart reuses the open attempt, so both paths
// send one key. Returns like Checkout. (With Planted.CallbackOwnKey it
// starts and charges its own attempt under a new key instead.)
func (c *Client) PaymentReady(ctx context.Context, orderID int64, cardToken string) CheckoutResult {
	return c.checkout(ctx, orderID, cardToken, c.cfg.Planted.CallbackOwnKey) // planted bug: CallbackOwnKey
}

// checkout is Checkout; ownAttempt (a planted bug) starts a new attempt
// whatever attempt is open.
func (c *Client) checkout(ctx context.Context, orderID int64, cardToken string, ownAttempt bool) CheckoutResult {
	ctx, done := c.callContext(ctx)
	defer done()

	order, ok := c.store.Order(orderID)
	if !ok {
		return CheckoutResult{Outcome: OutcomeFailed, HTTPStatus: http.StatusNotFound,
			Err: fmt.Errorf("%w: %d", ErrUnknownOrder, orderID)}
	}
	if order.Status == models.OrderPaid {
		return paid(order, "")
	}
	sp := startSpec{
		orderID:    orderID,
		cardHash:   models.CardHash(cardToken),
		now:        c.cfg.Now(),
		newID:      c.cfg.NewID,
		newKey:     c.cfg.NewKey,
		ignoreOpen: ownAttempt,
	}
	c.plantStart(&sp) // planted bugs: KeyPerOrder, KeyAfterSend, UnknownShownAsFailure
	att, order, _, err := c.store.getOrStart(c.epoch, sp)
	switch {
	case errors.Is(err, errAlreadyPaid):
		return paid(order, "")
	case errors.Is(err, ErrAttemptConflict):
		return CheckoutResult{Outcome: OutcomePreviousPaymentBeingVerified, HTTPStatus: http.StatusConflict,
			Order: order, Err: err}
	case errors.Is(err, ErrFenced):
		return c.crashResult(order, "", err)
	case err != nil:
		return CheckoutResult{Outcome: OutcomeFailed, HTTPStatus: http.StatusNotFound, Order: order, Err: err}
	}

	var res chargeResult
	if c.cfg.Planted.KeyAfterSend { // planted bug: KeyAfterSend
		res = c.chargeKeyAfterSend(ctx, att, cardToken)
	} else {
		res = c.gw.charge(ctx, att, cardToken)
	}
	res = c.cfg.Planted.misread(res) // planted bugs: ConflictIsFailure, ConflictIsSuccess
	attemptID := att.ID.String()
	switch res.kind {
	case chargeApproved:
		o, err := c.store.succeed(c.epoch, att.ID, res.chargeID)
		if err != nil {
			return c.crashResult(order, attemptID, err)
		}
		r := paid(o, attemptID)
		r.ChargeID = res.chargeID
		return r
	case chargeDeclined:
		o, err := c.store.decline(c.epoch, att.ID)
		if err != nil {
			return c.crashResult(order, attemptID, err)
		}
		return CheckoutResult{Outcome: OutcomeDeclined, HTTPStatus: http.StatusPaymentRequired,
			Order: o, AttemptID: attemptID, DeclineCode: res.declineCode}
	}
	if res.kind == chargeUnknown && c.cfg.Planted.UnknownShownAsFailure { // planted bug: UnknownShownAsFailure
		return c.unknownAsFailure(order, att, res)
	}
	// The attempt stays Open and the order PaymentPending: no store write.
	order, _ = c.store.Order(orderID)
	if c.crashed.Load() {
		return c.crashResult(order, attemptID, res.err)
	}
	r := CheckoutResult{Order: order, AttemptID: attemptID, Err: res.err}
	switch res.kind {
	case chargeUnknown:
		r.Outcome, r.HTTPStatus = OutcomePaymentPending, http.StatusAccepted
	case chargeUnavailable:
		r.Outcome, r.HTTPStatus = OutcomeUnavailable, http.StatusServiceUnavailable
	default:
		r.Outcome, r.HTTPStatus = OutcomeFailed, http.StatusInternalServerError
	}
	return r
}

func paid(o models.Order, attemptID string) CheckoutResult {
	return CheckoutResult{Outcome: OutcomePaid, HTTPStatus: http.StatusOK, Order: o,
		AttemptID: attemptID, ChargeID: o.ProviderChargeID}
}

// crashResult is the answer of a call whose client crashed or was
// superseded: the process is gone, so no answer reached the shopper.
func (c *Client) crashResult(o models.Order, attemptID string, cause error) CheckoutResult {
	err := ErrCrashed
	if cause != nil {
		err = fmt.Errorf("%w: %w", ErrCrashed, cause)
	}
	return CheckoutResult{Outcome: OutcomeFailed, HTTPStatus: http.StatusInternalServerError,
		Order: o, AttemptID: attemptID, Err: err}
}

// callContext derives a call's context from ctx (keeping its values) that
// Crash also cancels.
func (c *Client) callContext(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(c.life, func() { cancel(ErrCrashed) })
	return ctx, func() {
		stop()
		cancel(nil)
	}
}
