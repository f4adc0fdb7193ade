package machine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/idemcheck/idemcheck/checkout"
	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/backend"
	"github.com/idemcheck/idemcheck/sut/client"
	"pgregory.net/rapid"
)

// refundKinds are what the refund action does to a paid order, drawn in
// this order (rapid shrinks toward the first): refund a third, all or half
// of the order's total (a share of the total, not of what is left, so a
// later refund may ask for more than is left and be refused), or probe:
// send the key the order's charge was created with to /v1/refunds, for a
// refund of more than the charge (key-scoped-per-endpoint: kept apart, the
// reference refuses it with its own 402 and refunds nothing).
var refundKinds = []string{"a third", "all", "half", probeOtherEndpoint}

const probeOtherEndpoint = "the charge's key on /v1/refunds"

// refundTruth is the provider's refunds and whether they are known.
func (w *World) refundTruth() ([]models.Refund, bool, error) {
	rb, ok := w.prov.(backend.Refunder)
	if !ok {
		return nil, false, nil
	}
	rs, err := rb.Refunds()
	return rs, err == nil, err
}

// Refund implements checkout.Refunder.
func (r *refClient) Refund(ctx context.Context, o checkout.Order, amount int64) checkout.RefundResult {
	res := r.process().Refund(ctx, o.ID, amount)
	out := checkout.RefundResult{RefundID: res.RefundID}
	switch res.Outcome {
	case client.RefundDone:
		out.Outcome = checkout.Refunded
	case client.RefundPending:
		out.Outcome = checkout.RefundPending
	case client.RefundDenied:
		out.Outcome = checkout.RefundRefused
	default:
		out.Outcome = checkout.RefundFailed
	}
	return out
}

// refund is the merchant refunding a paid order, or the probe sending the
// order's charge key to /v1/refunds (refundKinds). It runs against a
// provider whose refunds the harness reads (in process, WireMock) and, for the
// merchant's refund, the reference client (a client under test is not
// driven through checkout.Refunder yet).
func (m *Machine) refund(t *rapid.T) {
	if _, ok := m.w.prov.(backend.Refunder); !ok {
		t.Skip("the provider under test serves no refunds the harness reads")
	}
	var paid []models.Order
	m.w.eachOrderState(func(_ int, s models.Order) {
		if s.Status == models.OrderPaid && s.ProviderChargeID != "" {
			paid = append(paid, s)
		}
	})
	if len(paid) == 0 {
		t.Skip("no paid order")
	}
	o := paid[ints(0, len(paid)-1).Draw(t, "paid_index")]
	kind := refundKindGen.Draw(t, "refund")
	if kind == probeOtherEndpoint {
		m.probeRefundKey(t, o)
		return
	}
	rf, ok := m.w.cli.(*refClient)
	if !ok {
		t.Skip("only the reference client is driven through checkout.Refunder")
	}
	amount := map[string]int64{"a third": o.Total / 3, "all": o.Total, "half": o.Total / 2}[kind]
	fs := m.drawRefundFaults(t)
	m.stepWith("refund", fmt.Sprintf("order %d: %s, %d %s", o.ID, kind, amount, o.Currency), fs)
	id := m.w.hist.BeginOp(models.Operation{Actor: "merchant", Kind: models.OpRefund, OrderID: o.ID,
		Amount: amount, Currency: o.Currency, InvokedAt: m.w.clock.Now()})
	res := rf.Refund(models.WithOp(context.Background(), id), checkout.Order{ID: o.ID, Amount: o.Total, Currency: o.Currency}, amount)
	m.w.hist.EndOp(id, func(op *models.Operation) {
		op.Returned, op.ReturnedAt, op.Result, op.ChargeID = true, m.w.clock.Now(), string(res.Outcome), res.RefundID
	})
}

// drawRefundFaults draws a merchant refund's fault schedule: the drawn
// one, led about half the time (a draw of its own, shrinking toward no)
// by a lost answer to the first try (lose-response), the unknown outcome
// a refund retry must resend under its key. Drawn per request alone, a
// refund step met it in one of ~8, and refund-key-per-try went unseen in
// 100 checks at the default 30 steps on seed 1 (issue 28).
func (m *Machine) drawRefundFaults(t *rapid.T) []faults.Fault {
	lost := !m.w.real && refundLostGen.Draw(t, "first_try_lost") // in virtual time only, as key_shape
	fs := m.drawFaults(t)
	if lost {
		fs = append([]faults.Fault{{Kind: faults.KindLoseResponse}}, fs...)
	}
	return fs
}

// probeRefundKey sends, outside the client, one POST /v1/refunds under the
// key order o's charge was created with, for one unit more than the
// charge: a provider that keeps keys per endpoint processes it as a new
// refund and refuses it (402), refunding nothing.
func (m *Machine) probeRefundKey(t *rapid.T, o models.Order) {
	var key string
	for _, a := range m.w.attempts() {
		if a.OrderID == o.ID && a.Status == models.AttemptSucceeded && a.ProviderChargeID == o.ProviderChargeID {
			key = a.IdempotencyKey
		}
	}
	if key == "" {
		t.Skip("no stored key for the order's charge")
	}
	m.stepWith("probe-key-on-refunds", fmt.Sprintf("order %d: its charge's key, a refund of %d %s", o.ID, o.Total+1, o.Currency), m.drawFaults(t))
	body := models.RefundRequest{Charge: o.ProviderChargeID, Amount: o.Total + 1, MerchantReference: fmt.Sprintf("probe-%d", o.ID)}
	id := m.w.hist.BeginOp(models.Operation{Actor: "probe", Kind: models.OpProbe, OrderID: o.ID,
		Amount: body.Amount, Currency: o.Currency, Detail: models.RefundsPath, InvokedAt: m.w.clock.Now()})
	raw, _ := json.Marshal(body) // plain fields
	ct := "application/json"
	if m.w.stripe {
		raw, ct = stripeRefund(body), "application/x-www-form-urlencoded"
	}
	ctx := models.WithOp(context.Background(), id)
	ctx, cancel := context.WithTimeout(ctx, m.w.ccfg.AttemptTimeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, m.w.ccfg.BaseURL+models.RefundsPath, bytes.NewReader(raw))
	req.Header.Set("Content-Type", ct)
	req.Header.Set(models.IdempotencyKeyHeader, m.w.keyHeader(key))
	if auth := m.w.probeAuthorization(); auth != "" {
		req.Header.Set("Authorization", auth) // the charge's account (auth.go)
	}
	result, status := "transport error", 0
	if resp, err := m.w.faults.RoundTrip(req); err == nil {
		_ = resp.Body.Close()
		result, status = resp.Status, resp.StatusCode
	}
	m.w.hist.EndOp(id, func(op *models.Operation) {
		op.Returned, op.ReturnedAt, op.Result, op.HTTPStatus = true, m.w.clock.Now(), result, status
	})
}
