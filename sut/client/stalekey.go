package client

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/idemcheck/idemcheck/models"
)

// ErrStaleKey: the order's open attempt was started longer ago than the
// provider keeps keys, less a margin (Config.KeyRetention −
// Config.StaleKeyMargin), and reconciliation could not settle it; its key
// is not resent, since the provider may have forgotten it and would charge
// again (draft-ietf-httpapi-idempotency-key-header, "Idempotency Key
// Validity and Expiry": the provider may expire keys after its published
// window). The order stays PaymentPending.
var ErrStaleKey = errors.New("client: the open attempt's key is too old to resend and reconciliation could not settle it")

// keyWindow is how long after an attempt's creation (its key's first send)
// the client may still send its key: KeyRetention − StaleKeyMargin.
func (c *Client) keyWindow() time.Duration { return c.cfg.KeyRetention - c.cfg.StaleKeyMargin }

// stale reports whether attempt a's key may no longer be sent at now.
func (c *Client) stale(a models.PaymentAttempt, now time.Time) bool {
	if c.cfg.Planted.StaleKeyResend { // planted bug: StaleKeyResend
		return false
	}
	return now.Sub(a.CreatedAt) >= c.keyWindow()
}

// settleStale runs before a checkout of orderID with card hash cardHash
// at now would resend an open attempt's stale key: it reconciles every
// stale open attempt of the order first, as the reconciliation job would
// (a charge makes it Succeeded and the order Paid; no charge after
// AbandonAfter abandons it, and the checkout goes on under a new key). If
// the attempt of this card is still open afterwards (the provider did not
// answer, or it was resent too recently to abandon), the checkout stops
// here: done is true and res is PaymentPending with ErrStaleKey, or Paid.
func (c *Client) settleStale(ctx context.Context, orderID int64, cardHash string, now time.Time) (res CheckoutResult, done bool) {
	if c.cfg.Planted.StaleKeyResend { // planted bug: StaleKeyResend
		return res, false
	}
	sctx := c.storeCtx(ctx)
	open, err := c.store.OpenAttempts(sctx, now.Add(-c.keyWindow()))
	if err != nil {
		return res, false // GetOrStart meets the store's error; refuseStale guards the resend
	}
	job := c.ReconciliationJob()
	for _, a := range open {
		if a.OrderID != orderID {
			continue
		}
		var rep ReconcileReport
		job.settle(ctx, a, now, &rep)
		o, err := c.store.LoadOrder(sctx, orderID)
		switch {
		case err != nil:
			return CheckoutResult{Outcome: OutcomeFailed, HTTPStatus: http.StatusInternalServerError, Err: err}, true
		case o.Status == models.OrderPaid:
			return paid(o, a.ID.String()), true
		case rep.Abandoned == 0 && a.CardTokenHash == cardHash:
			return c.refuseStale(o, a), true
		}
	}
	return res, false
}

// refuseStale is the answer of a checkout that will not resend attempt
// a's stale key: PaymentPending (202), nothing sent; the shopper sees
// "payment being verified" until reconciliation settles the attempt.
func (c *Client) refuseStale(o models.Order, a models.PaymentAttempt) CheckoutResult {
	if c.crashed.Load() {
		return c.crashResult(o, a.ID.String(), ErrStaleKey)
	}
	return CheckoutResult{Outcome: OutcomePaymentPending, HTTPStatus: http.StatusAccepted,
		Order: o, AttemptID: a.ID.String(), Err: ErrStaleKey}
}
