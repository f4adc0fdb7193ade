package stripewire

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/idemcheck/idemcheck/models"
)

// Recorder is the stripe dialect as the fault layer records a client of
// it (faults.Dialect): the key and form body of each request, the charge
// id of each answer, and Stripe's error JSON for a status the fault layer
// answers in the provider's place. It has no state.
type Recorder struct{}

// Name is models.DialectStripe.
func (Recorder) Name() string { return models.DialectStripe }

// cardParams are the form parameters that carry a card token.
var cardParams = []string{"source", "payment_method"}

// Describe records the Idempotency-Key as Stripe reads it — opaque, the
// whole value trimmed of spaces (quotes included), at most MaxKeyLength
// characters (https://docs.stripe.com/api/idempotent_requests) — and the
// form body: amount, currency (upper case, as docs/provider-api.md
// writes it), the card (source or payment_method, mapped by Card), the
// description and metadata[merchant_reference]; for a refund, its
// charge. Fingerprint is models.Fingerprint of the request the served
// dialect (provider.Provider.Stripe) hands the reference provider, so
// that the specification judges the key store as the provider decided.
// A body that is not a form records no body fields. Form keeps the body
// as sent, a card other than Card's test tokens and any raw card data
// (number, cvc, expiry) replaced by models.CardPlaceholder.
func (Recorder) Describe(ex *models.Exchange, keys []string, body []byte) {
	if len(keys) > 0 {
		ex.HasKey, ex.KeyHeader, ex.Key = true, strings.Join(keys, ", "), strings.TrimSpace(keys[0])
	}
	form, err := url.ParseQuery(string(body))
	if err != nil || len(body) == 0 {
		return
	}
	ex.Form = string(body)
	scrubbed := false
	for name, vs := range form {
		_, public := Card(form.Get(name))
		card := slices.Contains(cardParams, name) && !public
		if card || rawCard(name) {
			form[name], scrubbed = slices.Repeat([]string{models.CardPlaceholder}, len(vs)), true
		}
	}
	if scrubbed {
		ex.Form = form.Encode()
	}
	ex.Amount, _ = strconv.ParseInt(form.Get("amount"), 10, 64)
	ex.MerchantReference = form.Get(ReferenceParam)
	if ex.IsRefund() {
		ex.RefundCharge = form.Get("charge")
		return
	}
	src := form.Get("source")
	if src == "" {
		src = form.Get("payment_method")
	}
	card := src
	if c, ok := Card(src); ok {
		card = c
	}
	cr := models.ChargeRequest{Amount: ex.Amount, Currency: strings.ToUpper(form.Get("currency")), Source: card,
		Description: form.Get("description"), MerchantReference: ex.MerchantReference}
	ex.Fingerprint = models.Fingerprint(cr)
	ex.Currency, ex.Description = cr.Currency, cr.Description
	if card != "" {
		ex.CardHash, ex.Card = models.CardHash(card), models.CardLabel(card)
	}
}

// rawCard reports whether form parameter name carries raw card data
// (payment_method_data[card][number], card[cvc], …), which a history
// never keeps.
func rawCard(name string) bool {
	for _, part := range []string{"[number]", "[cvc]", "[exp_month]", "[exp_year]"} {
		if strings.Contains(name, part) {
			return true
		}
	}
	return false
}

// object is what ChargeID reads of an answer: a charge, a PaymentIntent
// (whose charge is its latest_charge) or a list of either.
type object struct {
	ID           string   `json:"id"`
	Object       string   `json:"object"`
	LatestCharge string   `json:"latest_charge"`
	Data         []object `json:"data"`
}

func (o object) charge() string {
	if o.Object == "payment_intent" {
		return o.LatestCharge
	}
	return o.ID
}

// ChargeID is the charge of a 2xx answer: a charge's id, a
// PaymentIntent's latest_charge (the charge it made: the charge, not the
// intent, is what the provider holds and the invariants count), or a
// list's or search result's, joined by ","; "" for any other answer.
func (Recorder) ChargeID(status int, body []byte) string {
	var o object
	if status < 200 || status > 299 || json.Unmarshal(body, &o) != nil {
		return ""
	}
	if o.Object != "list" && o.Object != "search_result" {
		return o.charge()
	}
	ids := make([]string, 0, len(o.Data))
	for _, d := range o.Data {
		ids = append(ids, d.charge())
	}
	return strings.Join(ids, ",")
}

// ErrorBody is Stripe's error JSON for status
// (https://docs.stripe.com/api/errors): 429 rate_limit, a 5xx api_error,
// any other invalid_request_error.
func (Recorder) ErrorBody(status int) (string, []byte) {
	var e Error
	e.Error.Type, e.Error.Message = TypeInvalidRequest, http.StatusText(status)+" (injected by idemcheck's fault layer)"
	switch {
	case status == http.StatusTooManyRequests:
		e.Error.Code = "rate_limit"
	case status >= 500:
		e.Error.Type = TypeAPI
	}
	b, _ := json.Marshal(e) // plain fields
	return "application/json", b
}
