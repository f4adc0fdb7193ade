package stripewire_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/stripewire"
)

// The recorder reads a Stripe request as the served dialect does: the key
// opaque (quotes are part of it), the form's fields, the card mapped for
// the fingerprint; Form keeps the body as sent.
func TestRecorderDescribesAForm(t *testing.T) {
	const body = "amount=500&currency=usd&payment_method=pm_card_chargeDeclined&confirm=true&metadata%5Bmerchant_reference%5D=bookstore-2-ab"
	ex := models.Exchange{Method: "POST", Path: "/v1/payment_intents"}
	stripewire.Recorder{}.Describe(&ex, []string{` "order-2" `}, []byte(body))
	assert.True(t, ex.HasKey)
	assert.Equal(t, `"order-2"`, ex.Key)
	assert.Equal(t, "bookstore-2-ab", ex.MerchantReference)
	assert.Equal(t, int64(500), ex.Amount)
	assert.Equal(t, "USD", ex.Currency)
	assert.Equal(t, "declined", ex.Card)
	assert.Equal(t, models.CardHash(models.DeclinedCard), ex.CardHash)
	assert.Equal(t, models.Fingerprint(models.ChargeRequest{Amount: 500, Currency: "USD", Source: models.DeclinedCard, MerchantReference: "bookstore-2-ab"}), ex.Fingerprint)
	assert.Equal(t, body, ex.Form, "the body exactly as sent")
}

// A card that is no public test token, and raw card data, never reach the
// history: they are models.CardPlaceholder in Form.
func TestRecorderKeepsNoCard(t *testing.T) {
	ex := models.Exchange{Method: "POST", Path: "/v1/payment_intents"}
	stripewire.Recorder{}.Describe(&ex, nil, []byte("amount=1&currency=usd&payment_method=pm_1QsecretCustomerCard&payment_method_data[card][number]=4242424242424242&payment_method_data[card][cvc]=123"))
	form, err := url.ParseQuery(ex.Form)
	require.NoError(t, err)
	for _, name := range []string{"payment_method", "payment_method_data[card][number]", "payment_method_data[card][cvc]"} {
		assert.Equal(t, models.CardPlaceholder, form.Get(name), name)
	}
	assert.NotContains(t, ex.Form, "4242")
	assert.NotContains(t, ex.Form, "pm_1Q")
	assert.False(t, ex.HasKey)
	assert.Empty(t, ex.Card, "no label for a card that is no test card")
}

// A PaymentIntent's charge is its latest_charge, in an answer and in a
// search result; an error answer names none.
func TestRecorderChargeID(t *testing.T) {
	r := stripewire.Recorder{}
	assert.Equal(t, "ch_000001", r.ChargeID(200, []byte(`{"id":"pi_000001","object":"payment_intent","latest_charge":"ch_000001"}`)))
	assert.Equal(t, "ch_000002", r.ChargeID(200, []byte(`{"id":"ch_000002","object":"charge"}`)))
	assert.Equal(t, "ch_000001,ch_000003", r.ChargeID(200, []byte(`{"object":"search_result","data":[{"id":"pi_000001","object":"payment_intent","latest_charge":"ch_000001"},{"id":"ch_000003","object":"charge"}]}`)))
	assert.Empty(t, r.ChargeID(402, []byte(`{"error":{"type":"card_error","charge":"ch_000004"}}`)))
}

// A status the fault layer answers is Stripe's error JSON of that status.
func TestRecorderErrorBody(t *testing.T) {
	for status, want := range map[int][2]string{
		http.StatusBadRequest:          {stripewire.TypeInvalidRequest, ""},
		http.StatusTooManyRequests:     {stripewire.TypeInvalidRequest, "rate_limit"},
		http.StatusServiceUnavailable:  {stripewire.TypeAPI, ""},
		http.StatusInternalServerError: {stripewire.TypeAPI, ""},
	} {
		ct, body := stripewire.Recorder{}.ErrorBody(status)
		assert.Equal(t, "application/json", ct)
		var e stripewire.Error
		require.NoError(t, json.Unmarshal(body, &e), "%d", status)
		assert.Equal(t, want, [2]string{e.Error.Type, e.Error.Code}, "%d", status)
	}
}
