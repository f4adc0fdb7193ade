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

// postRefund sends POST /v1/refunds with req under keyHeader.
func postRefund(t *testing.T, p *provider.Provider, keyHeader string, req models.RefundRequest) *httptest.ResponseRecorder {
	t.Helper()
	b, err := json.Marshal(req)
	require.NoError(t, err)
	r := httptest.NewRequest(http.MethodPost, models.RefundsPath, strings.NewReader(string(b)))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set(models.IdempotencyKeyHeader, keyHeader)
	r.Header.Set("Authorization", "Bearer sk_test_secret") // the account newPost charges under
	w := httptest.NewRecorder()
	p.ServeHTTP(w, r)
	return w
}

// paidCharge creates the visa charge under key "charge-key".
func paidCharge(t *testing.T, p *provider.Provider) models.Charge {
	t.Helper()
	return decodeCharge(t, post(t, p, `"charge-key"`, visa))
}

func TestRefund_CreatesReplaysAndRefusesMoreThanLeft(t *testing.T) {
	p := provider.New(provider.Config{})
	ch := paidCharge(t, p)
	req := models.RefundRequest{Charge: ch.ID, Amount: 40000, MerchantReference: "refund-1-a"}
	first := postRefund(t, p, `"r1"`, req)
	require.Equal(t, http.StatusCreated, first.Code, first.Body.String())
	var re models.Refund
	require.NoError(t, json.Unmarshal(first.Body.Bytes(), &re))
	assert.Equal(t, models.Refund{ID: "re_000001", Charge: ch.ID, Amount: 40000, Status: "succeeded", MerchantReference: "refund-1-a"}, re)

	again := postRefund(t, p, `"r1"`, req)
	assert.Equal(t, http.StatusCreated, again.Code)
	assert.Equal(t, first.Body.String(), again.Body.String(), "a replay")
	assert.Equal(t, "true", again.Header().Get(models.ReplayedHeader))

	other := req
	other.Amount = 1
	requireProblem(t, postRefund(t, p, `"r1"`, other), http.StatusUnprocessableEntity)

	// 54890 - 40000 = 14890 left: 14891 is refused, 14890 is not.
	over := models.RefundRequest{Charge: ch.ID, Amount: 14891, MerchantReference: "refund-1-b"}
	assert.Equal(t, http.StatusPaymentRequired, postRefund(t, p, `"r2"`, over).Code)
	rest := models.RefundRequest{Charge: ch.ID, Amount: 14890, MerchantReference: "refund-1-c"}
	assert.Equal(t, http.StatusCreated, postRefund(t, p, `"r3"`, rest).Code)
	assert.Len(t, p.Refunds(), 2)

	w := get(p, "/v1/refunds?merchant_reference=refund-1-a")
	require.Equal(t, http.StatusOK, w.Code)
	assert.JSONEq(t, `{"data":[{"id":"re_000001","charge":"`+ch.ID+`","amount":40000,"status":"succeeded","merchant_reference":"refund-1-a"}]}`, w.Body.String())
	requireProblem(t, get(p, "/v1/refunds"), http.StatusBadRequest)
}

func TestRefund_UnknownChargeAndBadRequests(t *testing.T) {
	p := provider.New(provider.Config{})
	assert.Equal(t, http.StatusNotFound, postRefund(t, p, `"r"`, models.RefundRequest{Charge: "ch_999999", Amount: 1, MerchantReference: "x"}).Code)
	requireProblem(t, postRefund(t, p, `"r2"`, models.RefundRequest{Charge: "ch_1", Amount: 0, MerchantReference: "x"}), http.StatusBadRequest)
	requireProblem(t, postRefund(t, p, "", models.RefundRequest{Charge: "ch_1", Amount: 1, MerchantReference: "x"}), http.StatusBadRequest)
	assert.Empty(t, p.Refunds())
}

// A key is scoped to its endpoint: a charge's key sent to /v1/refunds is a
// new key there (the refund is processed on its own), and the planted
// global stores block it or replay the charge.
func TestRefund_KeyScopedPerEndpoint(t *testing.T) {
	over := func(ch models.Charge) models.RefundRequest {
		return models.RefundRequest{Charge: ch.ID, Amount: ch.Amount + 1, MerchantReference: "probe"}
	}
	p := provider.New(provider.Config{})
	ch := paidCharge(t, p)
	assert.Equal(t, http.StatusPaymentRequired, postRefund(t, p, `"charge-key"`, over(ch)).Code, "kept apart: the refund's own refusal")

	shared := provider.New(provider.Config{Planted: provider.Planted{Refunds: provider.PlantedRefunds{SharedKeys: true}}})
	requireProblem(t, postRefund(t, shared, `"charge-key"`, over(paidCharge(t, shared))), http.StatusConflict)

	replays := provider.New(provider.Config{Planted: provider.Planted{Refunds: provider.PlantedRefunds{ReplaysCharge: true}}})
	ch = paidCharge(t, replays)
	w := postRefund(t, replays, `"charge-key"`, over(ch))
	assert.Equal(t, http.StatusCreated, w.Code)
	assert.Contains(t, w.Body.String(), ch.ID)
}

func TestRefund_NotIdempotentPlanted(t *testing.T) {
	p := provider.New(provider.Config{Planted: provider.Planted{Refunds: provider.PlantedRefunds{NotIdempotent: true}}})
	ch := paidCharge(t, p)
	req := models.RefundRequest{Charge: ch.ID, Amount: 1, MerchantReference: "refund-1-a"}
	postRefund(t, p, `"r1"`, req)
	postRefund(t, p, `"r1"`, req)
	assert.Len(t, p.Refunds(), 2)
}
