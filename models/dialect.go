package models

import (
	"bytes"

	"github.com/idemcheck/idemcheck/internal/jsonread"
)

// StripeMaxKeyLength is the longest idempotency key Stripe's dialect
// accepts: 255 characters (https://docs.stripe.com/api/idempotent_requests).
// It lives here, low, for the checks (conformance/check) and the wire
// (sut/stripewire) alike.
const StripeMaxKeyLength = 255

// OfDialect reports whether a provider's answer (status, body) to e's
// request is one docs/provider-api.md speaks: a JSON body and, for a 2xx,
// what the request asks for — a charge with an id (a create), a refund
// with an id (a refund), a JSON object (a lookup's list). A 201 of random
// bytes or HTML, or a 422 of plain text, is not: there is no charge to
// compare a replay with, no error to read. It is the one classification
// the requirements (certify) and the property's checks of a remote
// provider share, recorded on each exchange as ProviderForeign.
func OfDialect(e Exchange, status int, body []byte) bool {
	if !jsonread.Valid(body) {
		return false
	}
	if status < 200 || status > 299 {
		return true
	}
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return false
	}
	switch {
	case e.IsRefund():
		var r Refund
		return jsonread.Unmarshal(body, &r) == nil && r.ID != ""
	case e.Method == "POST":
		var c Charge
		return jsonread.Unmarshal(body, &c) == nil && c.ID != ""
	}
	return true
}

// Final reports whether the provider's answer in e claims an outcome: it
// answered, and neither transiently (429, a 5xx) nor with a redirect.
func (e Exchange) Final() bool {
	s := e.ProviderStatus
	return e.ProviderDone && s >= 200 && s != 429 && s < 500 && (s < 300 || s >= 400)
}
