package provider_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/provider"
)

func TestCreate_MissingKeyIs400(t *testing.T) {
	p := provider.New(provider.Config{})
	requireProblem(t, post(t, p, "", visa), http.StatusBadRequest)
	assert.Empty(t, p.Charges())
}

func TestCreate_UnparseableKeyIs400(t *testing.T) {
	p := provider.New(provider.Config{})
	for _, k := range []string{`"unterminated`, `""`, `two words`, `"bad\q"`, `   `} {
		t.Run(k, func(t *testing.T) {
			requireProblem(t, post(t, p, k, visa), http.StatusBadRequest)
		})
	}
	assert.Empty(t, p.Charges())
}

func TestCreate_AssignsSequentialIDs(t *testing.T) {
	p := provider.New(provider.Config{})

	first := decodeCharge(t, post(t, p, `"key-1"`, visa))
	assert.Equal(t, models.Charge{ID: "ch_000001", Amount: 54890, Currency: "TRY",
		Status: "succeeded", MerchantReference: "bookstore-1001-a"}, first)

	mc := visa
	mc.Source, mc.MerchantReference = "tok_mastercard", "bookstore-1002-b"
	w := post(t, p, `"key-2"`, mc)
	assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
	assert.JSONEq(t, `{"id":"ch_000002","amount":54890,"currency":"TRY","status":"succeeded",
		"merchant_reference":"bookstore-1002-b"}`, w.Body.String())
	assert.Empty(t, w.Header().Get(models.ReplayedHeader), "a first answer is not a replay")

	charges := p.Charges()
	require.Len(t, charges, 2)
	assert.Equal(t, []string{"ch_000001", "ch_000002"}, []string{charges[0].ID, charges[1].ID})
	assert.False(t, charges[0].Created.IsZero())
}

func TestCreate_ValidationIs400AndStoresNothing(t *testing.T) {
	cases := map[string]func(r *models.ChargeRequest){
		"zero amount":        func(r *models.ChargeRequest) { r.Amount = 0 },
		"negative amount":    func(r *models.ChargeRequest) { r.Amount = -1 },
		"lower-case ccy":     func(r *models.ChargeRequest) { r.Currency = "try" },
		"short ccy":          func(r *models.ChargeRequest) { r.Currency = "TR" },
		"unknown source":     func(r *models.ChargeRequest) { r.Source = "tok_amex" },
		"empty source":       func(r *models.ChargeRequest) { r.Source = "" },
		"no merchant ref":    func(r *models.ChargeRequest) { r.MerchantReference = "" },
		"all fields missing": func(r *models.ChargeRequest) { *r = models.ChargeRequest{} },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			p := provider.New(provider.Config{})
			bad := visa
			mutate(&bad)
			requireProblem(t, post(t, p, `"k"`, bad), http.StatusBadRequest)
			// Nothing was stored: the same key with a valid body is a fresh create.
			decodeCharge(t, post(t, p, `"k"`, visa))
			assert.Len(t, p.Charges(), 1)
		})
	}
	for name, raw := range map[string]string{
		"not json":      `amount=1`,
		"empty":         ``,
		"string amount": `{"amount":"1","currency":"TRY","source":"tok_visa","merchant_reference":"r"}`,
		"trailing data": `{"amount":1,"currency":"TRY","source":"tok_visa","merchant_reference":"r"} {}`,
	} {
		t.Run(name, func(t *testing.T) {
			p := provider.New(provider.Config{})
			w := httptest.NewRecorder()
			p.ServeHTTP(w, newPost(`"k"`, raw))
			requireProblem(t, w, http.StatusBadRequest)
			assert.Empty(t, p.Charges())
		})
	}
}

func TestFind_ByReferenceOldestFirst(t *testing.T) {
	p := provider.New(provider.Config{})
	other := visa
	other.MerchantReference = "bookstore-2-x"
	decodeCharge(t, post(t, p, "k1", visa))
	decodeCharge(t, post(t, p, "k2", other))
	decodeCharge(t, post(t, p, "k3", visa))

	w := get(p, "/v1/charges?merchant_reference=bookstore-1001-a")
	require.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
	assert.JSONEq(t, `{"data":[
		{"id":"ch_000001","amount":54890,"currency":"TRY","status":"succeeded","merchant_reference":"bookstore-1001-a"},
		{"id":"ch_000003","amount":54890,"currency":"TRY","status":"succeeded","merchant_reference":"bookstore-1001-a"}]}`,
		w.Body.String())
}

func TestFind_NoneIsEmptyList(t *testing.T) {
	p := provider.New(provider.Config{})
	w := get(p, "/v1/charges?merchant_reference=nobody")
	require.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, `{"data":[]}`, w.Body.String())
}

func TestFind_WithoutReferenceIs400(t *testing.T) {
	p := provider.New(provider.Config{})
	requireProblem(t, get(p, "/v1/charges"), http.StatusBadRequest)
	requireProblem(t, get(p, "/v1/charges?merchant_reference="), http.StatusBadRequest)
}

func TestRouting_UnknownPathIs404(t *testing.T) {
	p := provider.New(provider.Config{})
	requireProblem(t, get(p, "/v1/payouts"), http.StatusNotFound)
	requireProblem(t, get(p, "/v1/charges/ch_000001"), http.StatusNotFound)
	w := httptest.NewRecorder()
	p.ServeHTTP(w, newPost("k", body(t, visa)))
	decodeCharge(t, w) // sanity: the right path works
}

func TestRouting_WrongMethodIs405(t *testing.T) {
	p := provider.New(provider.Config{})
	for _, m := range []string{http.MethodPut, http.MethodDelete, http.MethodPatch} {
		w := httptest.NewRecorder()
		p.ServeHTTP(w, httptest.NewRequest(m, "/v1/charges", nil))
		requireProblem(t, w, http.StatusMethodNotAllowed)
		assert.Equal(t, "GET, POST", w.Header().Get("Allow"))
	}
}

func TestKeyOptionalProcessesAKeylessPostEveryTime(t *testing.T) {
	p := provider.New(provider.Config{KeyOptional: true})
	body := `{"amount":54890,"currency":"TRY","source":"tok_visa","description":"x","merchant_reference":"bookstore-1-00000000000000000000000000000001"}`
	for i := 0; i < 2; i++ {
		rec := httptest.NewRecorder()
		p.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/charges", strings.NewReader(body)))
		require.Equal(t, http.StatusCreated, rec.Code)
	}
	require.Len(t, p.Charges(), 2, "nothing deduplicates a keyless POST")

	strict := provider.New(provider.Config{})
	rec := httptest.NewRecorder()
	strict.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/charges", strings.NewReader(body)))
	require.Equal(t, http.StatusBadRequest, rec.Code)
}
