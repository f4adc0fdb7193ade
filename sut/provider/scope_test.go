package provider_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/provider"
)

// shaped is POST target with body raw under keyHeader, as account auth.
func shaped(p *provider.Provider, target, auth, keyHeader, raw string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, target, strings.NewReader(raw))
	r.Header.Set("Authorization", auth)
	r.Header.Set(models.IdempotencyKeyHeader, keyHeader)
	w := httptest.NewRecorder()
	p.ServeHTTP(w, r)
	return w
}

// reordered is visa's body with its fields in reverse order and spaced out.
const reordered = `{ "merchant_reference" : "bookstore-1001-a", "description": "Bookstore order 1001",
	"source": "tok_visa", "currency": "TRY", "amount": 54890 }`

// One logical request in several shapes (a trailing slash, an unrelated
// query parameter, the fields in another order with other whitespace) is
// one request under one key: each replays the first charge.
func TestShapes_EquivalentRequestsReplay(t *testing.T) {
	p := provider.New(provider.Config{})
	auth, key := "Bearer sk_test_a", `"k-shapes"`
	first := shaped(p, "/v1/charges", auth, key, body(t, visa))
	require.Equal(t, http.StatusCreated, first.Code, first.Body.String())
	for _, s := range []struct{ target, raw string }{
		{"/v1/charges/", body(t, visa)},
		{"/v1/charges?utm_source=mail", body(t, visa)},
		{"/v1/charges", reordered},
	} {
		again := shaped(p, s.target, auth, key, s.raw)
		assert.Equal(t, http.StatusCreated, again.Code, "%s %s: %s", s.target, s.raw, again.Body.String())
		assert.Equal(t, first.Body.Bytes(), again.Body.Bytes(), "%s %s", s.target, s.raw)
	}
	assert.Len(t, p.Charges(), 1)
}

// The planted shape bugs do what their names say: the raw URL as key
// charges again, the raw-byte fingerprint refuses reordered fields.
func TestShapes_PlantedBugs(t *testing.T) {
	auth, key := "Bearer sk_test_a", `"k-shapes"`
	p := provider.New(provider.Config{Planted: provider.Planted{PlantedShapes: provider.PlantedShapes{PathSensitiveKey: true}}})
	first := decodeCharge(t, shaped(p, "/v1/charges", auth, key, body(t, visa)))
	second := decodeCharge(t, shaped(p, "/v1/charges/", auth, key, body(t, visa)))
	assert.NotEqual(t, first.ID, second.ID)

	p = provider.New(provider.Config{Planted: provider.Planted{PlantedShapes: provider.PlantedShapes{OrderSensitiveFingerprint: true}}})
	decodeCharge(t, shaped(p, "/v1/charges", auth, key, body(t, visa)))
	requireProblem(t, shaped(p, "/v1/charges", auth, key, reordered), http.StatusUnprocessableEntity)
}

// Keys are scoped per account (draft §5): another account sending the
// same key, with the same body or another, gets a charge of its own, and
// each account lists only its own charges. GlobalKeyScope replays the
// first account's response instead.
func TestAccounts_KeysAndChargesPerAccount(t *testing.T) {
	p := provider.New(provider.Config{})
	key := `"k-accounts"`
	a := decodeCharge(t, shaped(p, "/v1/charges", "Bearer sk_test_a", key, body(t, visa)))
	b := decodeCharge(t, shaped(p, "/v1/charges", "Bearer sk_test_b", key, body(t, visa)))
	assert.NotEqual(t, a.ID, b.ID, "another account's key is its own")
	other := visa
	other.Amount++
	decodeCharge(t, shaped(p, "/v1/charges", "Bearer sk_test_c", key, body(t, other))) // not 422: not the first account's key

	for auth, want := range map[string]string{"Bearer sk_test_a": a.ID, "Bearer sk_test_b": b.ID} {
		r := httptest.NewRequest(http.MethodGet, "/v1/charges?merchant_reference="+visa.MerchantReference, nil)
		r.Header.Set("Authorization", auth)
		w := httptest.NewRecorder()
		p.ServeHTTP(w, r)
		var list models.ChargeList
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &list))
		require.Len(t, list.Data, 1, auth)
		assert.Equal(t, want, list.Data[0].ID, auth)
	}
	by := p.ChargesByAccount()
	assert.Len(t, by, 3)
	assert.Equal(t, a.ID, by[provider.AccountScope(httptestAuth("Bearer sk_test_a"))][0].ID)

	p = provider.New(provider.Config{Planted: provider.Planted{PlantedShapes: provider.PlantedShapes{GlobalKeyScope: true}}})
	first := shaped(p, "/v1/charges", "Bearer sk_test_a", key, body(t, visa))
	leaked := shaped(p, "/v1/charges", "Bearer sk_test_b", key, body(t, visa))
	assert.Equal(t, first.Body.Bytes(), leaked.Body.Bytes(), "the planted bug replays the first account's response")
}

// httptestAuth is a request carrying only the Authorization auth.
func httptestAuth(auth string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Authorization", auth)
	return r
}
