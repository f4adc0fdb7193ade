package remote_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// TestStripeDialect_KeepsTheProfilesReplayHeader: the stripe dialect
// passes through the replay header the profile names, so the replay
// requirement can see it. Regression (review): only Idempotent-Replayed
// was kept, so a profile naming another header always failed the replay.
func TestStripeDialect_KeepsTheProfilesReplayHeader(t *testing.T) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Stripe-Replayed", "true")
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"ch_1","amount":1099,"currency":"usd","status":"succeeded","metadata":{"merchant_reference":"ref-1"}}`)
	}))
	t.Cleanup(s.Close)
	prof := remote.StripeMockProfile()
	prof.ReplayHeader = "Stripe-Replayed"
	p, err := remote.New(remote.Config{BaseURL: s.URL, Dialect: remote.DialectStripe, Profile: prof})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, "http://provider/v1/charges",
		strings.NewReader(`{"amount":1099,"currency":"USD","source":"tok_visa","merchant_reference":"ref-1"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(models.IdempotencyKeyHeader, models.FormatKey("k-1"))
	resp, err := p.Transport().RoundTrip(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusCreated, resp.StatusCode)
	assert.Equal(t, "true", resp.Header.Get("Stripe-Replayed"))
}
