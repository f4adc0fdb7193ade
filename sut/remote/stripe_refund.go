package remote

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/stripewire"
)

// The stripe dialect's refunds:
//
//   - create: form-encoded POST /v1/refunds (charge, amount,
//     metadata[merchant_reference]) under the bare key; 200 becomes 201
//     with the refund's id, charge, amount, status and
//     metadata.merchant_reference; 400 invalid_request_error
//     amount_too_large or charge_already_refunded becomes the 402 refusal
//     of docs/provider-api.md; 400 idempotency_error becomes 422 (Stripe gives it
//     for another body under the key and for a key first used on another
//     endpoint: a final refusal either way); the rest keeps its status;
//   - find: Stripe has no search over refunds, so GET /v1/refunds?limit=100
//     (the newest hundred) is filtered on metadata.merchant_reference.
func (d stripeDialect) refund(next http.RoundTripper, base *url.URL, key APIKey, req *http.Request) (*http.Response, error) {
	var rr models.RefundRequest
	if req.Body != nil {
		b, err := faults.ReadBody(req.Body, d.maxBody)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &rr); err != nil {
			return nil, fmt.Errorf("remote: stripe dialect: the refund body is not a refund request: %v", err)
		}
	}
	form := stripewire.RefundForm(rr)
	out, err := http.NewRequestWithContext(req.Context(), http.MethodPost, onBase(base, models.RefundsPath, "").String(), strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	out.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if v := req.Header.Get(models.IdempotencyKeyHeader); v != "" {
		if k, _, ok := models.ParseKey(v); ok {
			v = k
		}
		out.Header.Set(models.IdempotencyKeyHeader, v)
	}
	resp, raw, err := exchange(next, out, key, d.maxBody)
	if err != nil {
		return nil, err
	}
	h := keep(resp.Header, "Retry-After", models.ReplayedHeader, d.replayHeader)
	if r := foreign(req, resp, h, raw, func() bool {
		var r stripewire.Refund
		return json.Unmarshal(raw, &r) == nil && r.ID != ""
	}); r != nil {
		return r, nil
	}
	se := decodeStripeError(raw)
	switch {
	case resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusCreated:
		var r stripewire.Refund
		_ = json.Unmarshal(raw, &r) // foreign checked it reads
		h.Set("Content-Type", "application/json")
		return newResponse(req, http.StatusCreated, h, mustJSON(r.Model())), nil
	case resp.StatusCode == http.StatusBadRequest && (se.Error.Code == "amount_too_large" || se.Error.Code == "charge_already_refunded"):
		h.Set("Content-Type", "application/json")
		return newResponse(req, http.StatusPaymentRequired, h, raw402(se.Error.Type, se.Error.Code)), nil
	case resp.StatusCode == http.StatusBadRequest && se.Error.Type == "idempotency_error":
		return problem(req, http.StatusUnprocessableEntity, h, "idempotency_error: the key was used with other parameters or on another endpoint"), nil
	}
	return problem(req, resp.StatusCode, h, strings.Trim(se.Error.Type+" "+se.Error.Code, " ")), nil
}

// raw402 is the docs/provider-api.md refusal body of a refund: the error's type
// and code only (never the provider's message).
func raw402(typ, code string) []byte {
	var e models.ErrorBody
	e.Error.Type, e.Error.Code = typ, code
	return mustJSON(e)
}

func (d stripeDialect) findRefunds(next http.RoundTripper, base *url.URL, key APIKey, req *http.Request) (*http.Response, error) {
	ref := req.URL.Query().Get("merchant_reference")
	if ref == "" {
		return nil, errors.New("remote: stripe dialect: a merchant reference must be non-empty")
	}
	out, err := http.NewRequestWithContext(req.Context(), http.MethodGet, onBase(base, models.RefundsPath, "limit=100").String(), nil)
	if err != nil {
		return nil, err
	}
	resp, raw, err := exchange(next, out, key, d.maxBody)
	if err != nil {
		return nil, err
	}
	h := keep(resp.Header, "Retry-After")
	if resp.StatusCode != http.StatusOK {
		se := decodeStripeError(raw)
		return problem(req, resp.StatusCode, h, strings.Trim(se.Error.Type+" "+se.Error.Code, " ")), nil
	}
	var list stripewire.List[stripewire.Refund]
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("remote: stripe dialect: a refunds list is not a list: %v", err)
	}
	found := models.RefundList{Data: []models.Refund{}}
	for _, r := range list.Data {
		if r.Metadata[stripewire.ReferenceField] == ref {
			found.Data = append(found.Data, r.Model())
		}
	}
	h.Set("Content-Type", "application/json")
	return newResponse(req, http.StatusOK, h, mustJSON(found)), nil
}
