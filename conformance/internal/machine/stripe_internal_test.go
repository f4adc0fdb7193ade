package machine

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/models"
)

// A probe in Stripe's dialect is the client's own request as it sent it
// (its path and form, the key bare) with the probe's change in it; the
// card keeps the client's kind of token (a PaymentMethod stays one).
func TestStripeProbeIsTheClientsOwnForm(t *testing.T) {
	w := &World{hist: models.NewHistory(), stripe: true}
	const sent = "amount=100&confirm=true&currency=try&description=Bookstore+order+1&metadata[merchant_reference]=bookstore-1-ab&payment_method=pm_card_visa&return_url=https%3A%2F%2Fshop.example%2Fdone"
	w.hist.BeginExchange(models.Exchange{Method: "POST", Path: "/v1/payment_intents/", Dialect: models.DialectStripe, MerchantReference: "bookstore-1-ab", Form: sent})
	body := models.ChargeRequest{Amount: 101, Currency: "EUR", Source: "tok_mastercard", Description: "Bookstore order 1", MerchantReference: "bookstore-1-ab"}
	path, raw := w.stripeCharge(body)
	assert.Equal(t, "/v1/payment_intents", path)
	form, err := url.ParseQuery(string(raw))
	assert.NoError(t, err)
	want, _ := url.ParseQuery(sent)
	want.Set("amount", "101")
	want.Set("currency", "eur")
	want.Set("payment_method", "pm_card_mastercard")
	assert.Equal(t, want, form)
	assert.Equal(t, "order-1_ab", w.keyHeader("order-1_ab"), "a Stripe key is sent bare")

	// No create of the reference on record: the body in stripewire's form, to /v1/charges.
	path, raw = w.stripeCharge(models.ChargeRequest{Amount: 5, Currency: "USD", Source: "tok_visa", MerchantReference: "bookstore-2-cd"})
	assert.Equal(t, "/v1/charges", path)
	form, _ = url.ParseQuery(string(raw))
	assert.Equal(t, "tok_visa", form.Get("source"))
	assert.Equal(t, "bookstore-2-cd", form.Get("metadata[merchant_reference]"))
}
