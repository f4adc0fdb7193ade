package provider_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/provider"
)

// visa is a valid charge request: 548.90 TRY on the approving test card.
var visa = models.ChargeRequest{
	Amount:            54890,
	Currency:          "TRY",
	Source:            "tok_visa",
	Description:       "Bookstore order 1001",
	MerchantReference: "bookstore-1001-a",
}

// body encodes req as JSON.
func body(t *testing.T, req models.ChargeRequest) string {
	t.Helper()
	b, err := json.Marshal(req)
	require.NoError(t, err)
	return string(b)
}

// newPost builds POST /v1/charges with the Idempotency-Key header set to
// keyHeader (none when empty) and the given raw body.
func newPost(keyHeader, raw string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/v1/charges", strings.NewReader(raw))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer sk_test_secret")
	if keyHeader != "" {
		r.Header.Set(models.IdempotencyKeyHeader, keyHeader)
	}
	return r
}

// post sends req under keyHeader to p and returns the recorded response.
func post(t *testing.T, p *provider.Provider, keyHeader string, req models.ChargeRequest) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	p.ServeHTTP(w, newPost(keyHeader, body(t, req)))
	return w
}

// get sends GET target to p and returns the recorded response.
func get(p *provider.Provider, target string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, target, nil)
	r.Header.Set("Authorization", "Bearer sk_test_secret") // newPost's account: a list is per account
	p.ServeHTTP(w, r)
	return w
}

// requireProblem asserts w is a problem-details answer with status.
func requireProblem(t *testing.T, w *httptest.ResponseRecorder, status int) models.Problem {
	t.Helper()
	require.Equal(t, status, w.Code, w.Body.String())
	require.Equal(t, "application/problem+json", w.Header().Get("Content-Type"))
	var pr models.Problem
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &pr))
	require.Equal(t, status, pr.Status)
	require.NotEmpty(t, pr.Title)
	return pr
}

// decodeCharge decodes a 201 body.
func decodeCharge(t *testing.T, w *httptest.ResponseRecorder) models.Charge {
	t.Helper()
	require.Equal(t, http.StatusCreated, w.Code, w.Body.String())
	var ch models.Charge
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &ch))
	return ch
}

// within waits for ch to be closed or to deliver, failing after 5s so a
// broken lock cannot hang the test.
func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}
