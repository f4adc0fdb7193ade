package provider_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/provider"
)

// The reference provider's key edge cases (docs/provider-api.md): a key of
// DefaultMaxKeyLength characters is taken, one longer is refused with 400
// and charges nothing, in either form; an empty header is no key (400).
// Before issue 25 a key of any length was taken.
func TestKeyLengthAndEmptyKey(t *testing.T) {
	p := provider.New(provider.Config{})
	atMax := strings.Repeat("k", provider.DefaultMaxKeyLength)
	assert.Equal(t, http.StatusCreated, post(t, p, models.FormatKey(atMax), visa).Code)
	for _, h := range []string{models.FormatKey(atMax + "x"), atMax + "x"} {
		w := post(t, p, h, visa)
		assert.Equal(t, http.StatusBadRequest, w.Code, w.Body.String())
		assert.Contains(t, w.Body.String(), "longer than 255 characters")
	}
	w := httptest.NewRecorder()
	r := newPost("", body(t, visa))
	r.Header[models.IdempotencyKeyHeader] = []string{""}
	p.ServeHTTP(w, r)
	assert.Equal(t, http.StatusBadRequest, w.Code)
	assert.Len(t, p.Charges(), 1)
	short := provider.New(provider.Config{MaxKeyLength: 8})
	assert.Equal(t, http.StatusBadRequest, post(t, short, `"123456789"`, visa).Code)
	assert.Equal(t, http.StatusCreated, post(t, short, `"12345678"`, visa).Code)
}

// Under KeyStuckAfterError a body that does not parse leaves its key in
// flight: the valid create under it is answered 409, as after a 404 of an
// unknown path; the reference processes both (the 400 and the 404 take no
// key).
func TestKeyStuckAfterABodyThatDoesNotParse(t *testing.T) {
	for _, c := range []struct {
		name  string
		stuck bool
	}{{"reference", false}, {"key-stuck-after-error", true}} {
		p := provider.New(provider.Config{Planted: provider.Planted{PlantedKeys: provider.PlantedKeys{KeyStuckAfterError: c.stuck}}})
		w := httptest.NewRecorder()
		p.ServeHTTP(w, newPost(`"k1"`, `{"amount": 1`))
		assert.Equal(t, http.StatusBadRequest, w.Code, c.name)
		w = httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, "/v1/no-such-resource", strings.NewReader(body(t, visa)))
		r.Header.Set("Authorization", "Bearer sk_test_secret")
		r.Header.Set(models.IdempotencyKeyHeader, `"k2"`)
		p.ServeHTTP(w, r)
		assert.Equal(t, http.StatusNotFound, w.Code, c.name)
		want := http.StatusCreated
		if c.stuck {
			want = http.StatusConflict
		}
		assert.Equal(t, want, post(t, p, `"k1"`, visa).Code, c.name)
		assert.Equal(t, want, post(t, p, `"k2"`, visa).Code, c.name)
	}
}

// A refund of an unknown charge is answered 404 as problem details, and
// so is its replay under the key (docs/provider-api.md: error answers
// are problem details). Regression (issue 25, found by
// errors-are-problem-details judging every error the run saw): both went
// as application/json.
func TestUnknownChargeRefundIsProblemDetails(t *testing.T) {
	p := provider.New(provider.Config{})
	req := models.RefundRequest{Charge: "ch_999999", Amount: 1, MerchantReference: "refund-x"}
	for _, what := range []string{"first", "replay"} {
		w := postRefund(t, p, `"r1"`, req)
		assert.Equal(t, http.StatusNotFound, w.Code, what)
		assert.Equal(t, models.ProblemContentType, w.Header().Get("Content-Type"), what)
	}
}
