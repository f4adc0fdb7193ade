// Package stripewire is the Stripe API's wire form as idemcheck speaks it,
// in both directions: the harness calling a Stripe-style provider
// (sut/remote's stripe dialect) and the embedded reference provider
// serving one (provider.Provider.Stripe). Both use these types and
// translations, so the two directions cannot disagree on a field name,
// a token or a search query.
//
// Sources: Stripe's API reference, https://docs.stripe.com/api/charges,
// https://docs.stripe.com/api/refunds, https://docs.stripe.com/search
// (query syntax), https://docs.stripe.com/api/errors and
// https://docs.stripe.com/api/idempotent_requests.
package stripewire

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/idemcheck/idemcheck/models"
)

// ReferenceField is the metadata key that carries docs/provider-api.md's
// merchant_reference.
const ReferenceField = "merchant_reference"

// ReferenceParam is ReferenceField as a form parameter.
const ReferenceParam = "metadata[" + ReferenceField + "]"

// MaxKeyLength is the longest idempotency key Stripe accepts: 255
// characters (https://docs.stripe.com/api/idempotent_requests).
const MaxKeyLength = models.StripeMaxKeyLength

// Charge is a Stripe charge object (the fields idemcheck reads).
type Charge struct {
	ID       string            `json:"id"`
	Object   string            `json:"object,omitempty"`
	Amount   int64             `json:"amount"`
	Currency string            `json:"currency"`
	Status   string            `json:"status"`
	Paid     bool              `json:"paid,omitempty"`
	Metadata map[string]string `json:"metadata"`
}

// Refund is a Stripe refund object (the fields idemcheck reads).
type Refund struct {
	ID       string            `json:"id"`
	Object   string            `json:"object,omitempty"`
	Charge   string            `json:"charge"`
	Amount   int64             `json:"amount"`
	Status   string            `json:"status"`
	Metadata map[string]string `json:"metadata"`
}

// List is a Stripe list or search_result object.
type List[T any] struct {
	Object  string `json:"object,omitempty"`
	URL     string `json:"url,omitempty"`
	HasMore bool   `json:"has_more"`
	Data    []T    `json:"data"`
}

// Error is Stripe's error body, {"error":{"type":…,"code":…,"message":…}}
// (https://docs.stripe.com/api/errors). Charge names the failed charge of
// a card_error decline.
type Error struct {
	Error struct {
		Type        string `json:"type"`
		Code        string `json:"code,omitempty"`
		DeclineCode string `json:"decline_code,omitempty"`
		Charge      string `json:"charge,omitempty"`
		Message     string `json:"message,omitempty"`
		// PaymentIntent is the intent a declined confirmation left
		// waiting (status requires_payment_method).
		PaymentIntent *PaymentIntent `json:"payment_intent,omitempty"`
	} `json:"error"`
}

// PaymentIntent is a Stripe PaymentIntent object (the fields idemcheck
// reads): a confirmed one that succeeded names its charge in
// LatestCharge.
type PaymentIntent struct {
	ID           string            `json:"id"`
	Object       string            `json:"object,omitempty"`
	Amount       int64             `json:"amount"`
	Currency     string            `json:"currency"`
	Status       string            `json:"status"`
	LatestCharge string            `json:"latest_charge,omitempty"`
	Metadata     map[string]string `json:"metadata"`
}

// IntentOf is a succeeded charge as the confirmed PaymentIntent that made
// it: "pi_<n>" of charge "ch_<n>".
func IntentOf(c models.Charge) PaymentIntent {
	ch := ChargeOf(c)
	return PaymentIntent{ID: IntentID(c.ID), Object: "payment_intent", Amount: ch.Amount, Currency: ch.Currency, Status: c.Status,
		LatestCharge: c.ID, Metadata: ch.Metadata}
}

// IntentID is the PaymentIntent id of charge id ("ch_000001" →
// "pi_000001").
func IntentID(chargeID string) string { return "pi_" + strings.TrimPrefix(chargeID, "ch_") }

// The error types of https://docs.stripe.com/api/errors.
const (
	TypeAPI            = "api_error"
	TypeCard           = "card_error"
	TypeIdempotency    = "idempotency_error"
	TypeInvalidRequest = "invalid_request_error"
)

// ChargeOf is the Stripe form of a docs/provider-api.md charge: currency
// in lower case, the merchant reference in metadata.
func ChargeOf(c models.Charge) Charge {
	return Charge{ID: c.ID, Object: "charge", Amount: c.Amount, Currency: strings.ToLower(c.Currency), Status: c.Status,
		Paid: c.Status == "succeeded", Metadata: map[string]string{ReferenceField: c.MerchantReference}}
}

// Model is c in docs/provider-api.md form (ChargeOf's inverse).
func (c Charge) Model() models.Charge {
	return models.Charge{ID: c.ID, Amount: c.Amount, Currency: strings.ToUpper(c.Currency), Status: c.Status, MerchantReference: c.Metadata[ReferenceField]}
}

// RefundOf is the Stripe form of a docs/provider-api.md refund.
func RefundOf(r models.Refund) Refund {
	return Refund{ID: r.ID, Object: "refund", Charge: r.Charge, Amount: r.Amount, Status: r.Status,
		Metadata: map[string]string{ReferenceField: r.MerchantReference}}
}

// Model is r in docs/provider-api.md form (RefundOf's inverse).
func (r Refund) Model() models.Refund {
	return models.Refund{ID: r.ID, Charge: r.Charge, Amount: r.Amount, Status: r.Status, MerchantReference: r.Metadata[ReferenceField]}
}

// ChargeForm is the form body of POST /v1/charges for cr.
func ChargeForm(cr models.ChargeRequest) url.Values {
	form := url.Values{}
	form.Set("amount", strconv.FormatInt(cr.Amount, 10))
	form.Set("currency", strings.ToLower(cr.Currency))
	form.Set("source", cr.Source)
	form.Set("description", cr.Description)
	form.Set(ReferenceParam, cr.MerchantReference)
	return form
}

// RefundForm is the form body of POST /v1/refunds for rr.
func RefundForm(rr models.RefundRequest) url.Values {
	form := url.Values{}
	form.Set("charge", rr.Charge)
	form.Set("amount", strconv.FormatInt(rr.Amount, 10))
	form.Set(ReferenceParam, rr.MerchantReference)
	return form
}

// ParamError is a form that cannot be served: Code is Stripe's
// (parameter_missing, parameter_unknown, parameter_invalid_integer,
// resource_missing), Param the parameter it names.
type ParamError struct {
	Code, Param, Message string
}

func (e *ParamError) Error() string { return e.Message }

// ChargeRequest reads a POST /v1/charges (or /v1/payment_intents) form:
// amount, currency, source (or payment_method), description and
// metadata[merchant_reference], each given once; the card token is mapped
// by Card. A missing amount, currency or reference, a parameter given
// twice or not listed, or an unknown card is a *ParamError.
func ChargeRequest(form url.Values, allowed ...string) (models.ChargeRequest, error) {
	if err := only(form, append([]string{"amount", "currency", "source", "description", ReferenceParam}, allowed...)); err != nil {
		return models.ChargeRequest{}, err
	}
	amount, err := positive(form, "amount")
	if err != nil {
		return models.ChargeRequest{}, err
	}
	src := form.Get("source")
	if src == "" {
		src = form.Get("payment_method")
	}
	card, ok := Card(src)
	if !ok {
		return models.ChargeRequest{}, &ParamError{"resource_missing", "source", fmt.Sprintf("No such token: '%s'", src)}
	}
	cr := models.ChargeRequest{Amount: amount, Currency: strings.ToUpper(form.Get("currency")), Source: card,
		Description: form.Get("description"), MerchantReference: form.Get(ReferenceParam)}
	switch {
	case form.Get("currency") == "":
		return cr, missing("currency")
	case cr.MerchantReference == "":
		return cr, missing(ReferenceParam)
	}
	return cr, nil
}

// IntentRequest reads a POST /v1/payment_intents form that confirms the
// intent at once (confirm=true; payment_method one of Card's; the
// automatic_payment_methods, payment_method_types and return_url a
// client may send are accepted and change nothing, so they are not part
// of the request's fingerprint either): the charge it asks for. An intent
// left unconfirmed is a *ParamError: the reference provider keeps
// charges, not intents waiting for a confirmation.
func IntentRequest(form url.Values) (models.ChargeRequest, error) {
	if form.Get("confirm") != "true" {
		return models.ChargeRequest{}, &ParamError{"parameter_invalid", "confirm", "This provider creates confirmed PaymentIntents only: confirm must be true."}
	}
	if form.Has("source") {
		return models.ChargeRequest{}, &ParamError{"parameter_unknown", "source", "Received unknown parameter: source"}
	}
	return ChargeRequest(form, "payment_method", "confirm", "payment_method_types[0]", "return_url",
		"automatic_payment_methods[enabled]", "automatic_payment_methods[allow_redirects]")
}

// RefundRequest reads a POST /v1/refunds form: charge, amount and
// metadata[merchant_reference], each required (the reference provider
// refunds no implied amount) and given once.
func RefundRequest(form url.Values) (models.RefundRequest, error) {
	if err := only(form, []string{"charge", "amount", ReferenceParam}); err != nil {
		return models.RefundRequest{}, err
	}
	amount, err := positive(form, "amount")
	if err != nil {
		return models.RefundRequest{}, err
	}
	rr := models.RefundRequest{Charge: form.Get("charge"), Amount: amount, MerchantReference: form.Get(ReferenceParam)}
	switch {
	case rr.Charge == "":
		return rr, missing("charge")
	case rr.MerchantReference == "":
		return rr, missing(ReferenceParam)
	}
	return rr, nil
}

// only refuses a parameter not in names, or one given twice.
func only(form url.Values, names []string) error {
	for name, vs := range form {
		known := false
		for _, n := range names {
			known = known || n == name
		}
		switch {
		case !known:
			return &ParamError{"parameter_unknown", name, "Received unknown parameter: " + name}
		case len(vs) > 1:
			return &ParamError{"parameter_invalid", name, "Received " + name + " more than once"}
		}
	}
	return nil
}

func positive(form url.Values, name string) (int64, error) {
	v := form.Get(name)
	if v == "" {
		return 0, missing(name)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, &ParamError{"parameter_invalid_integer", name, "Invalid positive integer: " + name}
	}
	return n, nil
}

func missing(name string) error {
	return &ParamError{"parameter_missing", name, "Missing required param: " + name + "."}
}

// cards maps Stripe's test tokens and PaymentMethods
// (https://docs.stripe.com/testing) onto the card tokens of
// docs/provider-api.md: the approving cards onto themselves, every
// decline onto tok_chargeDeclined; and the reference provider's slow
// trigger, tok_visa_slow (not Stripe's: profiles/reference-stripe.json
// publishes it), onto itself.
var cards = map[string]string{
	"tok_visa": "tok_visa", "pm_card_visa": "tok_visa", "tok_visa_slow": "tok_visa_slow",
	"tok_mastercard": "tok_mastercard", "pm_card_mastercard": "tok_mastercard",
	"tok_chargeDeclined": models.DeclinedCard, "pm_card_chargeDeclined": models.DeclinedCard,
	"tok_chargeDeclinedInsufficientFunds": models.DeclinedCard, "pm_card_chargeDeclinedInsufficientFunds": models.DeclinedCard,
	"tok_visa_chargeDeclined": models.DeclinedCard, "pm_card_visa_chargeDeclined": models.DeclinedCard,
	"tok_chargeDeclinedFraudulent": models.DeclinedCard, "pm_card_chargeDeclinedFraudulent": models.DeclinedCard,
}

// Card is the docs/provider-api.md token a Stripe test token or
// PaymentMethod stands for; ok is false for any other.
func Card(token string) (string, bool) {
	c, ok := cards[token]
	return c, ok
}

// SearchQuery is the Stripe search query that finds the charges of a
// merchant reference: metadata['merchant_reference']:'REF'.
func SearchQuery(ref string) (string, error) {
	if ref == "" || strings.ContainsAny(ref, `'"\`) {
		return "", errors.New("a merchant reference must be non-empty and free of quotes")
	}
	return "metadata['" + ReferenceField + "']:'" + ref + "'", nil
}

// SearchReference reads a SearchQuery back (single or double quotes
// around the value, as Stripe's query language allows); ok is false for
// any other query.
func SearchReference(query string) (ref string, ok bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(query), "metadata['"+ReferenceField+"']:")
	if !ok || len(rest) < 3 {
		return "", false
	}
	q := rest[0]
	if (q != '\'' && q != '"') || rest[len(rest)-1] != q {
		return "", false
	}
	ref = rest[1 : len(rest)-1]
	return ref, ref != "" && !strings.ContainsAny(ref, `'"\`)
}
