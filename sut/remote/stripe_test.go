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

// Regression (a stranger's server, issue 22 item 7): a create answered
// 200 with an HTML page, or an error with a body that is not JSON, was
// turned by the stripe dialect into no answer at all ("is not a
// charge"), or into problem details of the reference dialect; the
// property then FAILed reconciliation-converges against a provider that
// never answered in the dialect. The answer now passes as it came, so
// models.OfDialect sees it is not of the dialect, and the judgement is
// INCONCLUSIVE.
func TestStripeDialect_AnswersOutsideTheDialectPassAsTheyCame(t *testing.T) {
	for _, c := range []struct {
		status int
		ctype  string
		body   string
	}{
		{http.StatusOK, "text/html", "<html>not a charge</html>"},
		{http.StatusOK, "application/json", `{"object":"list"}`},
		{http.StatusUnprocessableEntity, "text/plain", "no"},
	} {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", c.ctype)
			w.WriteHeader(c.status)
			_, _ = io.WriteString(w, c.body)
		}))
		p, err := remote.New(remote.Config{BaseURL: s.URL, Dialect: remote.DialectStripe, Profile: remote.StripeMockProfile()})
		require.NoError(t, err)
		resp, err := create(t.Context(), p, "ref-1") // hostile_test.go
		require.NoError(t, err, "%d %s", c.status, c.body)
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		_ = resp.Body.Close()
		assert.Equal(t, c.status, resp.StatusCode, c.body)
		assert.Equal(t, c.body, string(b))
		assert.Equal(t, c.ctype, resp.Header.Get("Content-Type"))
		e := models.Exchange{Method: http.MethodPost, Path: "/v1/charges"}
		assert.False(t, models.OfDialect(e, resp.StatusCode, b), "%d %s is of the dialect", c.status, c.body)
		s.Close()
	}
}
