package stripewire_test

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/stripewire"
)

// What the harness sends (ChargeForm, RefundForm, SearchQuery) is what the
// served dialect reads back (ChargeRequest, RefundRequest,
// SearchReference): the two directions agree.
func TestFormsRoundTrip(t *testing.T) {
	cr := models.ChargeRequest{Amount: 54890, Currency: "TRY", Source: "tok_visa", Description: "Bookstore order 1001", MerchantReference: "bookstore-1001-a"}
	got, err := stripewire.ChargeRequest(stripewire.ChargeForm(cr))
	require.NoError(t, err)
	assert.Equal(t, cr, got)

	rr := models.RefundRequest{Charge: "ch_000001", Amount: 2000, MerchantReference: "refund-1001-x"}
	gotR, err := stripewire.RefundRequest(stripewire.RefundForm(rr))
	require.NoError(t, err)
	assert.Equal(t, rr, gotR)

	q, err := stripewire.SearchQuery("bookstore-1001-a")
	require.NoError(t, err)
	assert.Equal(t, "metadata['merchant_reference']:'bookstore-1001-a'", q)
	ref, ok := stripewire.SearchReference(q)
	assert.True(t, ok)
	assert.Equal(t, "bookstore-1001-a", ref)
	ref, ok = stripewire.SearchReference(`metadata['merchant_reference']:"b-1"`)
	assert.True(t, ok)
	assert.Equal(t, "b-1", ref)
	for _, bad := range []string{"", "amount>5", "metadata['merchant_reference']:''", "metadata['merchant_reference']:'a\"", "metadata['other']:'a'"} {
		_, ok := stripewire.SearchReference(bad)
		assert.False(t, ok, bad)
	}
	_, err = stripewire.SearchQuery("it's")
	assert.Error(t, err)

	c := models.Charge{ID: "ch_000001", Amount: 1, Currency: "TRY", Status: "succeeded", MerchantReference: "r"}
	assert.Equal(t, c, stripewire.ChargeOf(c).Model())
	re := models.Refund{ID: "re_000001", Charge: "ch_000001", Amount: 1, Status: "succeeded", MerchantReference: "r"}
	assert.Equal(t, re, stripewire.RefundOf(re).Model())
}

// Stripe's test tokens and PaymentMethods map onto the reference cards;
// a payment_method stands for source where a caller allows it.
func TestCards(t *testing.T) {
	for tok, want := range map[string]string{"tok_visa": "tok_visa", "pm_card_visa": "tok_visa", "pm_card_mastercard": "tok_mastercard",
		"tok_chargeDeclined": models.DeclinedCard, "pm_card_chargeDeclinedInsufficientFunds": models.DeclinedCard} {
		got, ok := stripewire.Card(tok)
		assert.True(t, ok, tok)
		assert.Equal(t, want, got, tok)
	}
	_, ok := stripewire.Card("tok_amex_live")
	assert.False(t, ok)
	cr, err := stripewire.ChargeRequest(url.Values{"amount": {"5"}, "currency": {"usd"}, "payment_method": {"pm_card_visa"}, "metadata[merchant_reference]": {"r"}}, "payment_method")
	require.NoError(t, err)
	assert.Equal(t, "tok_visa", cr.Source)
}

// A form the reference provider cannot serve is a *ParamError with
// Stripe's code, never a request with a field dropped.
func TestParamErrors(t *testing.T) {
	good := func() url.Values {
		return url.Values{"amount": {"5"}, "currency": {"usd"}, "source": {"tok_visa"}, "metadata[merchant_reference]": {"r"}}
	}
	for code, form := range map[string]url.Values{
		"parameter_missing":         func() url.Values { f := good(); f.Del("currency"); return f }(),
		"parameter_unknown":         func() url.Values { f := good(); f.Set("metadata[color]", "red"); return f }(),
		"parameter_invalid":         func() url.Values { f := good(); f.Add("amount", "6"); return f }(),
		"parameter_invalid_integer": func() url.Values { f := good(); f.Set("amount", "5.5"); return f }(),
		"resource_missing":          func() url.Values { f := good(); f.Set("source", "tok_nope"); return f }(),
	} {
		_, err := stripewire.ChargeRequest(form)
		var pe *stripewire.ParamError
		require.ErrorAs(t, err, &pe, code)
		assert.Equal(t, code, pe.Code)
	}
}
