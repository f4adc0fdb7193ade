package remote_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/provider"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// Both directions of the stripe dialect agree: the harness's stripe
// dialect, in front of the reference provider served in the stripe
// dialect (provider.Provider.Stripe), gets back docs/provider-api.md's
// answers — 201 and a replay of it with Idempotent-Replayed, 422 for the
// key with another body, 402 naming the decline, the charge found by
// reference, a refund and its lookup.
func TestStripeDialect_AgreesWithTheServedDialect(t *testing.T) {
	s := httptest.NewServer(provider.New(provider.Config{}).Stripe())
	t.Cleanup(s.Close)
	p, err := remote.New(remote.Config{BaseURL: s.URL, Dialect: remote.DialectStripe, Profile: remote.StripeMockProfile()})
	require.NoError(t, err)
	send := func(path, key, body string) (int, http.Header, string) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://provider"+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set(models.IdempotencyKeyHeader, models.FormatKey(key))
		req.Header.Set("Content-Type", "application/json")
		resp, err := p.Transport().RoundTrip(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, resp.Header, string(b)
	}
	charge := `{"amount":1099,"currency":"USD","source":"tok_visa","merchant_reference":"ref-1"}`
	s1, _, b1 := send("/v1/charges", "k1", charge)
	require.Equal(t, http.StatusCreated, s1, b1)
	assert.JSONEq(t, `{"id":"ch_000001","amount":1099,"currency":"USD","status":"succeeded","merchant_reference":"ref-1"}`, b1)
	s2, h2, b2 := send("/v1/charges", "k1", charge)
	assert.Equal(t, http.StatusCreated, s2)
	assert.JSONEq(t, b1, b2)
	assert.Equal(t, "true", h2.Get(models.ReplayedHeader))
	s3, _, _ := send("/v1/charges", "k1", strings.Replace(charge, "1099", "1100", 1))
	assert.Equal(t, http.StatusUnprocessableEntity, s3)

	s4, _, b4 := send("/v1/charges", "k2", `{"amount":1099,"currency":"USD","source":"tok_chargeDeclined","merchant_reference":"ref-2"}`)
	require.Equal(t, http.StatusPaymentRequired, s4, b4)
	var decline models.ErrorBody
	require.NoError(t, json.Unmarshal([]byte(b4), &decline))
	assert.Equal(t, "dc_000001", decline.Error.DeclineID)

	found, err := p.Find(t.Context(), "ref-1")
	require.NoError(t, err)
	require.Len(t, found, 1)
	assert.Equal(t, "ch_000001", found[0].ID)

	s5, _, b5 := send(models.RefundsPath, "r1", `{"charge":"ch_000001","amount":99,"merchant_reference":"refund-1"}`)
	require.Equal(t, http.StatusCreated, s5, b5)
	s6, _, _ := send(models.RefundsPath, "r2", `{"charge":"ch_000001","amount":5000,"merchant_reference":"refund-2"}`)
	assert.Equal(t, http.StatusPaymentRequired, s6, "amount_too_large is the 402 refusal")
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://provider/v1/refunds?merchant_reference=refund-1", nil)
	require.NoError(t, err)
	resp, err := p.Transport().RoundTrip(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var refunds models.RefundList
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&refunds))
	require.Len(t, refunds.Data, 1)
	assert.Equal(t, int64(99), refunds.Data[0].Amount)
}
