package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/idemcheck/idemcheck/models"
)

// RefundOutcome is what a refund tells the merchant.
type RefundOutcome string

// The refund outcomes and the HTTP status the shop's endpoint answers with.
const (
	// RefundDone (200): the provider holds the refund.
	RefundDone RefundOutcome = "Refunded"
	// RefundPending (202): the outcome is unknown; the intent stays Open, a
	// refund of the same amount resends its key, reconciliation settles it.
	RefundPending RefundOutcome = "RefundPending"
	// RefundDenied (402): the provider refused it (more than is left of
	// the charge); nothing was refunded.
	RefundDenied RefundOutcome = "RefundRefused"
	// RefundUnavailable (503): nothing was refunded (429/503 only, nothing
	// sent); the intent stays Open and its key is kept.
	RefundUnavailable RefundOutcome = "RefundUnavailable"
	// RefundFailed (409 for an order not paid or another refund being
	// verified, 404 for an unknown order, 500 otherwise): nothing was sent,
	// or the provider broke the contract.
	RefundFailed RefundOutcome = "RefundFailed"
)

// RefundResult is the answer of one Refund call.
type RefundResult struct {
	Outcome    RefundOutcome
	HTTPStatus int
	// IntentID is the refund intent used; RefundID the provider's refund.
	IntentID, RefundID string
	Err                error
}

// Refund gives amount minor units of paid order orderID back (a merchant's
// full or partial refund). It reuses the order's Open refund intent when
// the amount matches, or stores a new one with its key before the first
// send, and POSTs /v1/refunds under that key on every try (one key per
// refund intent, as one key per payment intent). The store must be a
// RefundStore.
func (c *Client) Refund(ctx context.Context, orderID, amount int64) RefundResult {
	ctx, done := c.callContext(ctx)
	defer done()
	sctx := c.storeCtx(ctx)
	rs, ok := c.store.(RefundStore)
	if !ok {
		return RefundResult{Outcome: RefundFailed, HTTPStatus: http.StatusInternalServerError,
			Err: errors.New("client: the attempt store keeps no refunds")}
	}
	order, err := c.store.LoadOrder(sctx, orderID)
	switch {
	case errors.Is(err, ErrUnknownOrder):
		return RefundResult{Outcome: RefundFailed, HTTPStatus: http.StatusNotFound, Err: err}
	case err != nil:
		return RefundResult{Outcome: RefundFailed, HTTPStatus: http.StatusInternalServerError, Err: err}
	case order.Status != models.OrderPaid || order.ProviderChargeID == "":
		return RefundResult{Outcome: RefundFailed, HTTPStatus: http.StatusConflict, Err: fmt.Errorf("client: order %d is not paid", orderID)}
	}
	intent, _, err := rs.StartRefund(sctx, c.epoch, RefundSpec{OrderID: orderID, Charge: order.ProviderChargeID,
		Amount: amount, Now: c.cfg.Now(), NewID: c.cfg.NewID, NewKey: c.cfg.NewKey})
	switch {
	case errors.Is(err, ErrRefundConflict):
		return RefundResult{Outcome: RefundFailed, HTTPStatus: http.StatusConflict, Err: err}
	case errors.Is(err, ErrFenced):
		return RefundResult{Outcome: RefundFailed, HTTPStatus: http.StatusInternalServerError, Err: fmt.Errorf("%w: %w", ErrCrashed, err)}
	case err != nil:
		return RefundResult{Outcome: RefundFailed, HTTPStatus: http.StatusInternalServerError, Err: err}
	}
	if !c.cfg.Planted.StaleKeyResend && c.cfg.Now().Sub(intent.CreatedAt) >= c.keyWindow() { // planted bug: StaleKeyResend
		// An open refund intent as old as the provider's retention window
		// (less the margin): its key may be forgotten and would refund
		// again. Nothing is sent; reconciliation (GET
		// /v1/refunds?merchant_reference=) settles the intent.
		return RefundResult{Outcome: RefundPending, HTTPStatus: http.StatusAccepted, IntentID: intent.ID.String(), Err: ErrStaleKey}
	}
	res := c.gw.refund(ctx, intent)
	out := RefundResult{IntentID: intent.ID.String(), Err: res.err}
	switch res.kind {
	case chargeApproved:
		out.Outcome, out.HTTPStatus, out.RefundID = RefundDone, http.StatusOK, res.chargeID
		err = rs.SettleRefund(sctx, c.epoch, intent.ID, models.RefundSucceeded, res.chargeID)
	case chargeDeclined:
		out.Outcome, out.HTTPStatus = RefundDenied, http.StatusPaymentRequired
		err = rs.SettleRefund(sctx, c.epoch, intent.ID, models.RefundRefused, "")
	case chargeUnknown:
		out.Outcome, out.HTTPStatus = RefundPending, http.StatusAccepted
	case chargeUnavailable:
		out.Outcome, out.HTTPStatus = RefundUnavailable, http.StatusServiceUnavailable
	default: // a contract violation: the intent stays Open; reconciliation settles it
		out.Outcome, out.HTTPStatus = RefundFailed, http.StatusInternalServerError
	}
	if err != nil || c.crashed.Load() {
		return RefundResult{Outcome: RefundFailed, HTTPStatus: http.StatusInternalServerError, IntentID: out.IntentID, Err: ErrCrashed}
	}
	return out
}

// refund POSTs the intent's refund under its stored key (a Structured
// Field String) and reads the answer as a charge's: 201/200 with an id →
// approved, 402 → refused, 409/timeouts/500/502/504 → unknown.
func (g *gateway) refund(ctx context.Context, r models.RefundIntent) chargeResult {
	body, _ := json.Marshal(models.RefundRequest{Charge: r.Charge, Amount: r.Amount, MerchantReference: r.Reference()}) // plain fields
	h := g.header()
	h.Set("Content-Type", "application/json")
	h.Set(models.IdempotencyKeyHeader, models.FormatKey(r.IdempotencyKey))
	return classifyCharge(g.p.send(ctx, http.MethodPost, g.baseURL+models.RefundsPath, body, h))
}

// findRefunds asks GET /v1/refunds?merchant_reference=ref.
func (g *gateway) findRefunds(ctx context.Context, ref string) (models.RefundList, error) {
	r := g.p.send(ctx, http.MethodGet, g.baseURL+models.RefundsPath+"?merchant_reference="+url.QueryEscape(ref), nil, g.header())
	var list models.RefundList
	if r.err != nil || r.status != http.StatusOK {
		return list, fmt.Errorf("client: finding refunds: %s", describe(r))
	}
	if err := json.Unmarshal(r.body, &list); err != nil {
		return list, fmt.Errorf("client: finding refunds: decoding the list: %w", err)
	}
	return list, nil
}

// reconcileRefunds settles Open refund intents last sent at least MinAge
// before now, as RunOnce settles attempts: a refund found by the intent's
// reference makes it Succeeded; none and AbandonAfter since the last send
// makes it Abandoned (the merchant may refund again under a new key).
func (c *Client) reconcileRefunds(ctx context.Context, now time.Time, rep *ReconcileReport) {
	rs, ok := c.store.(RefundStore)
	if !ok {
		return
	}
	sctx := c.storeCtx(ctx)
	open, err := rs.OpenRefunds(sctx, now.Add(-c.cfg.MinAge))
	if err != nil {
		rep.Errors++
		return
	}
	for _, r := range open {
		rep.Checked++
		list, err := c.gw.findRefunds(ctx, r.Reference())
		if err != nil {
			rep.Errors++
			continue
		}
		switch {
		case len(list.Data) > 0:
			err = rs.SettleRefund(sctx, c.epoch, r.ID, models.RefundSucceeded, list.Data[0].ID)
			count(rep, &rep.Succeeded, err)
		case now.Sub(r.LastSentAt) >= c.cfg.AbandonAfter:
			abandoned, err := rs.AbandonRefund(sctx, c.epoch, r.ID, now.Add(-c.cfg.AbandonAfter))
			switch {
			case err != nil:
				rep.Errors++
			case abandoned:
				rep.Abandoned++
			default:
				rep.StillOpen++
			}
		default:
			rep.StillOpen++
		}
	}
}
