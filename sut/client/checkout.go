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
	// stays Open and a retry with the same card resends its key (unless
	// the key is stale: ErrStaleKey, nothing sent).
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
	store   AttemptStore
	epoch   Epoch
	gw      *gateway
	life    context.Context // cancelled by Crash
	die     context.CancelFunc
	crashed atomic.Bool
	unsaved unsavedKeys // planted bug: KeyAfterSend
}

// New returns a client with cfg's defaults applied, and opens store for
// cfg.Instance: it starts a new epoch of that instance, so that writes from
// any earlier client of the instance on the same store (a crashed process)
// are dropped. When Open fails (a database that does not answer; the
// in-memory Store never fails) every write of the client fails with
// ErrFenced; Open returns that error instead.
func New(cfg Config, store AttemptStore) *Client {
	c, _ := Open(context.Background(), cfg, store)
	return c
}

// Open is New that returns the store's error when opening it failed (the
// client is then returned too, fenced).
func Open(ctx context.Context, cfg Config, store AttemptStore) (*Client, error) {
	cfg = cfg.withDefaults()
	life, die := context.WithCancel(context.Background())
	c := &Client{
		cfg:   cfg,
		store: store,
		epoch: Epoch{Instance: cfg.Instance}, // N 0 is never current
		life:  life,
		die:   die,
	}
	c.gw = &gateway{baseURL: strings.TrimRight(cfg.BaseURL, "/"), apiKey: cfg.APIKey, p: newPipeline(cfg)}
	e, err := store.Open(ctx, cfg.Instance)
	if err != nil {
		return c, fmt.Errorf("client: open the attempt store: %w", err)
	}
	c.epoch = e
	return c, nil
}

// Store returns the store the client writes to.
func (c *Client) Store() AttemptStore { return c.store }

// Crash simulates the process dying: it cancels every in-flight call of
// this client and fences its store epoch, so that nothing this client does
// afterwards writes to the store. A new client of the same instance opened
// on the store carries on with the stored attempts and keys.
func (c *Client) Crash() {
	c.crashed.Store(true)
	_ = c.store.Fence(context.Background(), c.epoch) // a store that cannot fence drops the epoch at the next Open
	c.die()
}

// storeCtx is the context of a store call made under ctx: ctx's values and
// deadline, not its cancellation (a crash cancels the call; whether its
// writes land is the epoch's to decide, as for a process killed mid-query).
func (c *Client) storeCtx(ctx context.Context) context.Context {
	return context.WithoutCancel(ctx)
}

// at calls Config.At at point p, if set.
func (c *Client) at(ctx context.Context, p Point) {
	if c.cfg.At != nil {
		c.cfg.At(ctx, p)
	}
}

// OpenOrder stores a new Placed order of total minor units of currency and
// returns it; ids are 1, 2, 3... per store. A crashed client stores nothing
// and returns the zero Order.
func (c *Client) OpenOrder(total int64, currency string) models.Order {
	o, err := c.store.OpenOrder(context.Background(), c.epoch, total, currency)
	if err != nil {
		return models.Order{}
	}
	return o
}

// Checkout pays order orderID with cardToken (seed article 000,
// CheckoutService). It reuses the order's open attempt when the card and
// amount match, or starts one — stored, with its key, before the first
// send — and charges it through the gateway. An open attempt started
// KeyRetention − StaleKeyMargin ago or earlier (23 h by default) is
// reconciled first and its key never resent (stalekey.go). Every request
// carries ctx. The token is sent to the provider and nowhere else; only
// its SHA-256 is stored.
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

	sctx := c.storeCtx(ctx)
	order, err := c.store.LoadOrder(sctx, orderID)
	switch {
	case errors.Is(err, ErrUnknownOrder):
		return CheckoutResult{Outcome: OutcomeFailed, HTTPStatus: http.StatusNotFound,
			Err: fmt.Errorf("%w: %d", ErrUnknownOrder, orderID)}
	case err != nil:
		return CheckoutResult{Outcome: OutcomeFailed, HTTPStatus: http.StatusInternalServerError, Err: err}
	case order.Status == models.OrderPaid:
		return paid(order, "")
	}
	sp := StartSpec{
		OrderID:    orderID,
		CardHash:   models.CardHash(cardToken),
		Now:        c.cfg.Now(),
		NewID:      c.cfg.NewID,
		NewKey:     c.cfg.NewKey,
		IgnoreOpen: ownAttempt,
	}
	c.plantStart(&sp) // planted bugs: KeyPerOrder, KeyAfterSend, UnknownShownAsFailure
	c.at(ctx, PointBeforeStore)
	if res, done := c.settleStale(ctx, orderID, sp.CardHash, sp.Now); done {
		return res
	}
	st, err := c.store.GetOrStart(sctx, c.epoch, sp)
	att, order := st.Attempt, st.Order
	switch {
	case errors.Is(err, ErrAlreadyPaid):
		return paid(order, "")
	case errors.Is(err, ErrAttemptConflict):
		return CheckoutResult{Outcome: OutcomePreviousPaymentBeingVerified, HTTPStatus: http.StatusConflict,
			Order: order, Err: err}
	case errors.Is(err, ErrFenced):
		return c.crashResult(order, "", err)
	case errors.Is(err, ErrUnknownOrder):
		return CheckoutResult{Outcome: OutcomeFailed, HTTPStatus: http.StatusNotFound, Order: order, Err: err}
	case err != nil:
		return CheckoutResult{Outcome: OutcomeFailed, HTTPStatus: http.StatusInternalServerError, Order: order, Err: err}
	case st.Reused && c.stale(att, sp.Now): // another call reused it since settleStale looked
		return c.refuseStale(order, att)
	}
	c.at(ctx, PointBeforeSend)
	if c.crashed.Load() {
		// Killed at the point: a dead process sends nothing (the cancelled
		// call must not reach the wire by the scheduler's choice).
		return c.crashResult(order, att.ID.String(), nil)
	}

	var res chargeResult
	if c.cfg.Planted.KeyAfterSend { // planted bug: KeyAfterSend
		res = c.chargeKeyAfterSend(ctx, att, cardToken)
	} else {
		res = c.gw.charge(ctx, att, cardToken)
	}
	res = c.cfg.Planted.misread(res) // planted bugs: ConflictIsFailure, ConflictIsSuccess
	c.at(ctx, PointBeforeStatus)
	attemptID := att.ID.String()
	switch res.kind {
	case chargeApproved:
		o, err := c.store.Succeed(sctx, c.epoch, att.ID, res.chargeID)
		if err != nil {
			return c.crashResult(order, attemptID, err)
		}
		r := paid(o, attemptID)
		r.ChargeID = res.chargeID
		return r
	case chargeDeclined:
		o, err := c.store.EndAttempt(sctx, c.epoch, att.ID, models.AttemptDeclined)
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
	if o, err := c.store.LoadOrder(sctx, orderID); err == nil {
		order = o
	}
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
