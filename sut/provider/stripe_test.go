package provider_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/provider"
	"github.com/idemcheck/idemcheck/sut/stripewire"
)

// stripeCharge is a form a stripe-go client sends for a charge.
func stripeCharge(amount, source, ref string) url.Values {
	return url.Values{"amount": {amount}, "currency": {"usd"}, "source": {source}, "metadata[merchant_reference]": {ref}}
}

// stripeDo sends method target with form under key ("": none) in account
// auth to h.
func stripeDo(h http.Handler, method, target, key, auth string, form url.Values) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, strings.NewReader(form.Encode()))
	if method == http.MethodPost {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	r.Header.Set("Authorization", auth)
	if key != "" {
		r.Header.Set(models.IdempotencyKeyHeader, key)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

const stripeAuth = "Bearer sk_test_shop"

func stripePost(h http.Handler, target, key string, form url.Values) *httptest.ResponseRecorder {
	return stripeDo(h, http.MethodPost, target, key, stripeAuth, form)
}

// stripeErr decodes a Stripe error answer with status.
func stripeErr(t *testing.T, w *httptest.ResponseRecorder, status int) stripewire.Error {
	t.Helper()
	require.Equal(t, status, w.Code, w.Body.String())
	require.Equal(t, "application/json", w.Header().Get("Content-Type"))
	var e stripewire.Error
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &e))
	require.NotEmpty(t, e.Error.Type, w.Body.String())
	return e
}

func stripeObj[T any](t *testing.T, w *httptest.ResponseRecorder) T {
	t.Helper()
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	var v T
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &v))
	return v
}

// An opaque bare key (stripe-go's "<unix nanos>_<6 chars>") charges once
// and replays the charge with Idempotent-Replayed: true; the same key with
// another amount is 400 idempotency_error, and nothing more is charged.
func TestStripe_ReplayAndMismatch(t *testing.T) {
	p := provider.New(provider.Config{})
	h := p.Stripe()
	key := "1764763200123456789_Ab3dE9"
	first := stripePost(h, "/v1/charges", key, stripeCharge("1000", "tok_visa", "shop-1-a"))
	c := stripeObj[stripewire.Charge](t, first)
	assert.Equal(t, stripewire.Charge{ID: "ch_000001", Object: "charge", Amount: 1000, Currency: "usd", Status: "succeeded", Paid: true,
		Metadata: map[string]string{"merchant_reference": "shop-1-a"}}, c)
	again := stripePost(h, "/v1/charges", key, stripeCharge("1000", "tok_visa", "shop-1-a"))
	assert.Equal(t, first.Body.String(), again.Body.String())
	assert.Equal(t, "true", again.Header().Get(models.ReplayedHeader))
	assert.Empty(t, first.Header().Get(models.ReplayedHeader))

	e := stripeErr(t, stripePost(h, "/v1/charges", key, stripeCharge("1001", "tok_visa", "shop-1-a")), http.StatusBadRequest)
	assert.Equal(t, stripewire.TypeIdempotency, e.Error.Type)
	assert.Len(t, p.Charges(), 1)
}

// Keys are opaque: a quoted value is another key than the bare one (the
// quotes are part of it); 255 characters are accepted, 256 refused with
// 400 before anything is charged; two headers are refused.
func TestStripe_OpaqueKeys(t *testing.T) {
	p := provider.New(provider.Config{})
	h := p.Stripe()
	stripeObj[stripewire.Charge](t, stripePost(h, "/v1/charges", "k1", stripeCharge("1000", "tok_visa", "r")))
	quoted := stripeObj[stripewire.Charge](t, stripePost(h, "/v1/charges", `"k1"`, stripeCharge("1000", "tok_visa", "r")))
	assert.Equal(t, "ch_000002", quoted.ID, "a quoted key is another opaque key")

	long := strings.Repeat("x", stripewire.MaxKeyLength)
	stripeObj[stripewire.Charge](t, stripePost(h, "/v1/charges", long, stripeCharge("1000", "tok_visa", "r")))
	e := stripeErr(t, stripePost(h, "/v1/charges", long+"y", stripeCharge("1000", "tok_visa", "r")), http.StatusBadRequest)
	assert.Equal(t, stripewire.TypeInvalidRequest, e.Error.Type)

	r := httptest.NewRequest(http.MethodPost, "/v1/charges", strings.NewReader(stripeCharge("1000", "tok_visa", "r").Encode()))
	r.Header.Add(models.IdempotencyKeyHeader, "a")
	r.Header.Add(models.IdempotencyKeyHeader, "b")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	stripeErr(t, w, http.StatusBadRequest)
	assert.Len(t, p.Charges(), 3)
}

// The key is optional, as on Stripe: two keyless requests are two charges.
func TestStripe_KeylessChargesEachTime(t *testing.T) {
	p := provider.New(provider.Config{})
	h := p.Stripe()
	a := stripeObj[stripewire.Charge](t, stripePost(h, "/v1/charges", "", stripeCharge("1000", "pm_card_visa", "r")))
	b := stripeObj[stripewire.Charge](t, stripePost(h, "/v1/charges", "", stripeCharge("1000", "pm_card_visa", "r")))
	assert.NotEqual(t, a.ID, b.ID)
}

// While the first request under a key is processing, a second is 409
// idempotency_error idempotency_key_in_use, and only one charge is made.
func TestStripe_InFlightConflict(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	p := provider.New(provider.Config{BeforeCommit: func(*http.Request) {
		close(entered)
		<-release
	}})
	h := p.Stripe()
	done := make(chan *httptest.ResponseRecorder, 1)
	go func() { done <- stripePost(h, "/v1/charges", "k", stripeCharge("1000", "tok_visa", "r")) }()
	within(t, entered, "the first request to start processing")
	e := stripeErr(t, stripePost(h, "/v1/charges", "k", stripeCharge("1000", "tok_visa", "r")), http.StatusConflict)
	assert.Equal(t, stripewire.TypeIdempotency, e.Error.Type)
	assert.Equal(t, "idempotency_key_in_use", e.Error.Code)
	close(release)
	stripeObj[stripewire.Charge](t, within(t, done, "the first answer"))
	assert.Len(t, p.Charges(), 1)
}

// Every decline token is a 402 card_error naming its failed charge, stored
// and replayed under its key; an unknown token, a missing parameter or an
// unknown one is 400 invalid_request_error and charges nothing.
func TestStripe_DeclinesAndValidation(t *testing.T) {
	p := provider.New(provider.Config{})
	h := p.Stripe()
	for i, tok := range []string{"tok_chargeDeclined", "pm_card_chargeDeclined", "tok_chargeDeclinedInsufficientFunds", "pm_card_visa_chargeDeclined"} {
		key := "d" + tok
		e := stripeErr(t, stripePost(h, "/v1/charges", key, stripeCharge("1000", tok, "r")), http.StatusPaymentRequired)
		assert.Equal(t, stripewire.TypeCard, e.Error.Type)
		assert.Equal(t, "card_declined", e.Error.Code)
		assert.Equal(t, "dc_00000"+string(rune('1'+i)), e.Error.Charge, tok)
		again := stripePost(h, "/v1/charges", key, stripeCharge("1000", tok, "r"))
		assert.Equal(t, http.StatusPaymentRequired, again.Code)
		assert.Equal(t, "true", again.Header().Get(models.ReplayedHeader), tok)
	}
	for _, form := range []url.Values{
		stripeCharge("1000", "tok_bogus", "r"),
		stripeCharge("", "tok_visa", "r"),
		stripeCharge("-5", "tok_visa", "r"),
		stripeCharge("1000", "tok_visa", ""),
		func() url.Values { f := stripeCharge("1000", "tok_visa", "r"); f.Set("customer", "cus_1"); return f }(),
	} {
		e := stripeErr(t, stripePost(h, "/v1/charges", "v"+form.Encode(), form), http.StatusBadRequest)
		assert.Equal(t, stripewire.TypeInvalidRequest, e.Error.Type, form.Encode())
	}
	assert.Empty(t, p.Charges())
}

// Retrieve, list (newest first, limit) and search by metadata see the
// asking account's charges only.
func TestStripe_Reads(t *testing.T) {
	p := provider.New(provider.Config{})
	h := p.Stripe()
	for i, ref := range []string{"a", "b", "a"} {
		stripeObj[stripewire.Charge](t, stripePost(h, "/v1/charges", "k"+string(rune('0'+i)), stripeCharge("1000", "tok_visa", ref)))
	}
	stripeObj[stripewire.Charge](t, stripeDo(h, http.MethodPost, "/v1/charges", "k", "Bearer sk_test_other", stripeCharge("1000", "tok_visa", "a")))

	got := stripeObj[stripewire.Charge](t, stripeDo(h, http.MethodGet, "/v1/charges/ch_000002", "", stripeAuth, nil))
	assert.Equal(t, "b", got.Metadata["merchant_reference"])
	e := stripeErr(t, stripeDo(h, http.MethodGet, "/v1/charges/ch_000004", "", stripeAuth, nil), http.StatusNotFound)
	assert.Equal(t, "resource_missing", e.Error.Code, "another account's charge is not found")

	list := stripeObj[stripewire.List[stripewire.Charge]](t, stripeDo(h, http.MethodGet, "/v1/charges?limit=2", "", stripeAuth, nil))
	assert.True(t, list.HasMore)
	require.Len(t, list.Data, 2)
	assert.Equal(t, []string{"ch_000003", "ch_000002"}, []string{list.Data[0].ID, list.Data[1].ID})

	q, err := stripewire.SearchQuery("a")
	require.NoError(t, err)
	found := stripeObj[stripewire.List[stripewire.Charge]](t, stripeDo(h, http.MethodGet, "/v1/charges/search?"+url.Values{"query": {q}}.Encode(), "", stripeAuth, nil))
	assert.Equal(t, "search_result", found.Object)
	require.Len(t, found.Data, 2)
	assert.Equal(t, []string{"ch_000001", "ch_000003"}, []string{found.Data[0].ID, found.Data[1].ID})
	stripeErr(t, stripeDo(h, http.MethodGet, "/v1/charges/search?query=amount%3E5", "", stripeAuth, nil), http.StatusBadRequest)
	stripeErr(t, stripeDo(h, http.MethodGet, "/v1/charges?limit=101", "", stripeAuth, nil), http.StatusBadRequest)
}

// Refunds: a form refund is 200 with the refund object and replays; more
// than is left of the charge is Stripe's 400 amount_too_large (stored
// under the key); GET /v1/refunds lists the account's refunds newest first.
func TestStripe_Refunds(t *testing.T) {
	p := provider.New(provider.Config{})
	h := p.Stripe()
	stripeObj[stripewire.Charge](t, stripePost(h, "/v1/charges", "c", stripeCharge("1000", "tok_visa", "r")))
	refund := func(amount, ref string) url.Values {
		return url.Values{"charge": {"ch_000001"}, "amount": {amount}, "metadata[merchant_reference]": {ref}}
	}
	re := stripeObj[stripewire.Refund](t, stripePost(h, "/v1/refunds", "r1", refund("400", "rf-1")))
	assert.Equal(t, stripewire.Refund{ID: "re_000001", Object: "refund", Charge: "ch_000001", Amount: 400, Status: "succeeded",
		Metadata: map[string]string{"merchant_reference": "rf-1"}}, re)
	assert.Equal(t, "true", stripePost(h, "/v1/refunds", "r1", refund("400", "rf-1")).Header().Get(models.ReplayedHeader))
	e := stripeErr(t, stripePost(h, "/v1/refunds", "r2", refund("700", "rf-2")), http.StatusBadRequest)
	assert.Equal(t, "amount_too_large", e.Error.Code)
	assert.Equal(t, "true", stripePost(h, "/v1/refunds", "r2", refund("700", "rf-2")).Header().Get(models.ReplayedHeader))
	stripeObj[stripewire.Refund](t, stripePost(h, "/v1/refunds", "r3", refund("600", "rf-3")))
	list := stripeObj[stripewire.List[stripewire.Refund]](t, stripeDo(h, http.MethodGet, "/v1/refunds?limit=100", "", stripeAuth, nil))
	require.Len(t, list.Data, 2)
	assert.Equal(t, "rf-3", list.Data[0].Metadata["merchant_reference"])
	got := stripeObj[stripewire.Refund](t, stripeDo(h, http.MethodGet, "/v1/refunds/re_000001", "", stripeAuth, nil))
	assert.Equal(t, int64(400), got.Amount)
}

// A key is kept for the retention window (24 h by default) and forgotten
// after it: the same request then charges again.
func TestStripe_RetentionWindow(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	p := provider.New(provider.Config{Now: func() time.Time { return now }})
	h := p.Stripe()
	stripeObj[stripewire.Charge](t, stripePost(h, "/v1/charges", "k", stripeCharge("1000", "tok_visa", "r")))
	now = now.Add(24 * time.Hour)
	assert.Equal(t, "true", stripePost(h, "/v1/charges", "k", stripeCharge("1000", "tok_visa", "r")).Header().Get(models.ReplayedHeader))
	now = now.Add(time.Second)
	late := stripeObj[stripewire.Charge](t, stripePost(h, "/v1/charges", "k", stripeCharge("1000", "tok_visa", "r")))
	assert.Equal(t, "ch_000002", late.ID)
}

// A PaymentIntent created with confirm=true is the charge it makes,
// answered as the intent (pi_<n>, latest_charge ch_<n>), replayed under
// its key, retrieved and found by metadata search as an intent; a decline
// is 402 with the intent requires_payment_method; an unconfirmed intent
// is 400 and charges nothing.
func TestStripe_PaymentIntents(t *testing.T) {
	p := provider.New(provider.Config{})
	h := p.Stripe()
	intent := func(pm, confirm string) url.Values {
		return url.Values{"amount": {"2000"}, "currency": {"eur"}, "payment_method": {pm}, "confirm": {confirm},
			"automatic_payment_methods[enabled]": {"true"}, "automatic_payment_methods[allow_redirects]": {"never"},
			"metadata[merchant_reference]": {"shop-5-a"}}
	}
	first := stripePost(h, "/v1/payment_intents", "pi-k", intent("pm_card_visa", "true"))
	pi := stripeObj[stripewire.PaymentIntent](t, first)
	assert.Equal(t, stripewire.PaymentIntent{ID: "pi_000001", Object: "payment_intent", Amount: 2000, Currency: "eur", Status: "succeeded",
		LatestCharge: "ch_000001", Metadata: map[string]string{"merchant_reference": "shop-5-a"}}, pi)
	again := stripePost(h, "/v1/payment_intents", "pi-k", intent("pm_card_visa", "true"))
	assert.Equal(t, first.Body.String(), again.Body.String())
	assert.Equal(t, "true", again.Header().Get(models.ReplayedHeader))

	e := stripeErr(t, stripePost(h, "/v1/payment_intents", "pi-d", intent("pm_card_chargeDeclined", "true")), http.StatusPaymentRequired)
	require.NotNil(t, e.Error.PaymentIntent)
	assert.Equal(t, "requires_payment_method", e.Error.PaymentIntent.Status)
	e = stripeErr(t, stripePost(h, "/v1/payment_intents", "pi-u", intent("pm_card_visa", "false")), http.StatusBadRequest)
	assert.Equal(t, "parameter_invalid", e.Error.Code)
	assert.Len(t, p.Charges(), 1)

	got := stripeObj[stripewire.PaymentIntent](t, stripeDo(h, http.MethodGet, "/v1/payment_intents/pi_000001", "", stripeAuth, nil))
	assert.Equal(t, "ch_000001", got.LatestCharge)
	q, err := stripewire.SearchQuery("shop-5-a")
	require.NoError(t, err)
	found := stripeObj[stripewire.List[stripewire.PaymentIntent]](t, stripeDo(h, http.MethodGet, "/v1/payment_intents/search?"+url.Values{"query": {q}}.Encode(), "", stripeAuth, nil))
	require.Len(t, found.Data, 1)
	assert.Equal(t, "pi_000001", found.Data[0].ID)
}
