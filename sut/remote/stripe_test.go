package remote_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	resp, err := create(t.Context(), p, "ref-1") // hostile_test.go
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusCreated, resp.StatusCode)
	assert.Equal(t, "true", resp.Header.Get("Stripe-Replayed"))
}

// Regression (breaker, issue 11): the stripe dialect read answers through
// its own 4 MiB LimitReader, so with IDEMCHECK_MAX_BODY raised to 8 MiB a
// 5 MiB charge the wire had accepted was cut short in silence and
// reported as "not a charge" (unexpected end of JSON input). The dialect
// reads with the run's cap.
func TestStripeDialect_ReadsWithTheRunsBodyCap(t *testing.T) {
	const pad = 5 << 20
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"description":"`+strings.Repeat("x", pad)+`","id":"ch_1","amount":1099,"currency":"usd","status":"succeeded","metadata":{"merchant_reference":"ref-1"}}`)
	}))
	t.Cleanup(s.Close)
	p, err := remote.New(remote.Config{BaseURL: s.URL, Dialect: remote.DialectStripe, Profile: remote.StripeMockProfile(), Limits: remote.Limits{MaxBody: 8 << 20}})
	require.NoError(t, err)
	resp, err := create(t.Context(), p, "ref-1") // hostile_test.go
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusCreated, resp.StatusCode)
}
