package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/failsafe-go/failsafe-go/circuitbreaker"

	"github.com/idemcheck/idemcheck/models"
)

// Gateway errors, wrapped in CheckoutResult.Err and reconciliation errors.
var (
	// ErrUnknownOutcome: a try may have charged and no final answer says
	// whether it did (a timeout, a transport error, 409, 500/502/504).
	ErrUnknownOutcome = errors.New("client: payment outcome unknown")
	// ErrUnavailable: the provider was not reached or answered only 429/503,
	// or the circuit breaker is open; nothing was charged.
	ErrUnavailable = errors.New("client: payment provider unavailable")
	// ErrContractViolation: the provider answered 400, 422 or another
	// status outside the contract; it is never retried.
	ErrContractViolation = errors.New("client: provider contract violation")
)

// chargeKind is the gateway's reading of a create-charge call (seed
// article 000, PaymentFailureKind).
type chargeKind int

const (
	chargeApproved chargeKind = iota
	chargeDeclined
	chargeUnknown
	chargeUnavailable
	chargeContractViolation
)

// chargeResult is the outcome of one create-charge call through the pipeline.
type chargeResult struct {
	kind        chargeKind
	status      int // the final HTTP status, 0 if none
	chargeID    string
	declineCode string
	err         error // nil when approved or declined
}

// gateway is the provider adapter of seed article 000 (ProviderPaymentGateway):
// it builds the requests and maps the provider's answers.
type gateway struct {
	baseURL string
	apiKey  string
	p       *pipeline
}

// charge POSTs the attempt's charge under its stored idempotency key, sent
// as a Structured Field String, and maps the final answer: 201/200 →
// approved; 402 → declined; 400/422 → contract violation; 409, a timeout, a
// transport error or 500/502/504 in any try → unknown outcome; only
// 429/503, a breaker rejection or nothing sent → unavailable.
func (g *gateway) charge(ctx context.Context, a models.PaymentAttempt, cardToken string) chargeResult {
	body, err := json.Marshal(models.ChargeRequest{
		Amount:            a.Amount,
		Currency:          a.Currency,
		Source:            cardToken,
		Description:       "Bookstore order " + strconv.FormatInt(a.OrderID, 10),
		MerchantReference: a.Reference(),
	})
	if err != nil { // cannot happen for these field types
		return chargeResult{kind: chargeUnavailable, err: fmt.Errorf("%w: encoding the charge", ErrUnavailable)}
	}
	h := g.header()
	h.Set("Content-Type", "application/json")
	h.Set(models.IdempotencyKeyHeader, models.FormatKey(a.IdempotencyKey))
	if g.p.cfg.Planted.RetryWithoutKey { // planted bug: RetryWithoutKey
		h.Del(models.IdempotencyKeyHeader)
	}
	r := g.p.send(ctx, http.MethodPost, g.baseURL+"/v1/charges", body, h)
	return classifyCharge(r)
}

func classifyCharge(r reply) chargeResult {
	res := chargeResult{status: r.status}
	switch {
	case r.err == nil && (r.status == http.StatusCreated || r.status == http.StatusOK):
		var ch models.Charge
		if json.Unmarshal(r.body, &ch) == nil && ch.ID != "" {
			res.kind, res.chargeID = chargeApproved, ch.ID
			return res
		}
		// Approved but unreadable: the charge exists; reconciliation finds it.
		res.kind, res.err = chargeUnknown, fmt.Errorf("%w: %d without a charge id", ErrUnknownOutcome, r.status)
		return res
	case r.err == nil && r.status == http.StatusPaymentRequired:
		var eb models.ErrorBody
		_ = json.Unmarshal(r.body, &eb) // a decline without a readable body is still a decline
		res.kind, res.declineCode = chargeDeclined, eb.Error.DeclineCode
		if res.declineCode == "" {
			res.declineCode = eb.Error.Code
		}
		return res
	case r.unknown:
		res.kind, res.err = chargeUnknown, fmt.Errorf("%w: %s", ErrUnknownOutcome, describe(r))
		return res
	case r.err != nil || r.status == http.StatusTooManyRequests || r.status == http.StatusServiceUnavailable:
		res.kind, res.err = chargeUnavailable, fmt.Errorf("%w: %s", ErrUnavailable, describe(r))
		return res
	default: // 400, 422, and any status outside the contract
		res.kind, res.err = chargeContractViolation, fmt.Errorf("%w: %s", ErrContractViolation, describe(r))
		return res
	}
}

// describe summarizes a reply for an error message; it never includes a
// header or a request body (no card token, no API key).
func describe(r reply) string {
	last := "status " + strconv.Itoa(r.status)
	if r.err != nil {
		last = r.err.Error()
		if errors.Is(r.err, circuitbreaker.ErrOpen) {
			last = "circuit breaker open"
		}
	}
	return fmt.Sprintf("%d tries, last: %s", r.tries, last)
}

// findCharges asks GET /v1/charges?merchant_reference=ref through the
// pipeline (seed article 000, FindChargeAsync).
func (g *gateway) findCharges(ctx context.Context, ref string) (models.ChargeList, error) {
	r := g.p.send(ctx, http.MethodGet, g.baseURL+"/v1/charges?merchant_reference="+url.QueryEscape(ref), nil, g.header())
	var list models.ChargeList
	if r.err != nil {
		return list, fmt.Errorf("client: finding charges: %s", describe(r))
	}
	if r.status != http.StatusOK {
		return list, fmt.Errorf("client: finding charges: %s", describe(r))
	}
	if err := json.Unmarshal(r.body, &list); err != nil {
		return list, fmt.Errorf("client: finding charges: decoding the list: %w", err)
	}
	return list, nil
}

// header returns the headers every request carries.
func (g *gateway) header() http.Header {
	h := make(http.Header)
	h.Set("Accept", "application/json")
	if g.apiKey != "" {
		h.Set("Authorization", "Bearer "+g.apiKey)
	}
	return h
}
