package mutants_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/client"
	"github.com/idemcheck/idemcheck/sut/mutants"
)

// keysSeen wraps the transport a mutant's client config installs and
// returns the Idempotency-Key header of each request sent through it.
func keysSeen(t *testing.T, name string, reqs ...*http.Request) []string {
	t.Helper()
	m, err := mutants.Lookup(name)
	require.NoError(t, err)
	n := 0
	cfg := client.Config{NewKey: func() string { n++; return fmt.Sprintf("generated-%d", n) }}
	m.Client(&cfg)
	require.NotNil(t, cfg.WrapTransport, "%s wraps the transport", name)
	var seen []string
	rt := cfg.WrapTransport(roundTrip(func(r *http.Request) (*http.Response, error) {
		seen = append(seen, r.Header.Get(models.IdempotencyKeyHeader))
		return &http.Response{StatusCode: http.StatusServiceUnavailable, Body: http.NoBody, Request: r}, nil
	}))
	for _, r := range reqs {
		_, err := rt.RoundTrip(r)
		require.NoError(t, err)
	}
	return seen
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func post(t *testing.T, op int) *http.Request {
	t.Helper()
	r, err := http.NewRequestWithContext(models.WithOp(t.Context(), op), http.MethodPost, "http://provider.test/v1/charges", http.NoBody)
	require.NoError(t, err)
	r.Header.Set(models.IdempotencyKeyHeader, models.FormatKey("caller-key"))
	return r
}

func TestFreshKeyPerRequestSendsANewKeyEveryTime(t *testing.T) {
	assert.Equal(t, []string{`"generated-1"`, `"generated-2"`}, keysSeen(t, "fresh-key-per-request", post(t, 1), post(t, 1)))
}

func TestCallerKeyDroppedKeepsOnlyTheFirstTryOfACall(t *testing.T) {
	got := keysSeen(t, "caller-key-dropped", post(t, 1), post(t, 1), post(t, 2))
	assert.Equal(t, []string{`"caller-key"`, `"generated-1"`, `"caller-key"`}, got)
}

func TestUnquotedKeySendsTheBareToken(t *testing.T) {
	assert.Equal(t, []string{"caller-key"}, keysSeen(t, "unquoted-key", post(t, 1)))
}

func TestSidesAndLookup(t *testing.T) {
	for _, m := range mutants.All() {
		switch m.Side {
		case "client":
			assert.NotNil(t, m.Client, m.Name)
		case "provider":
			assert.True(t, m.Provider != nil || m.RedisStore != nil, m.Name)
		default:
			t.Errorf("%s: side %q", m.Name, m.Side)
		}
	}
	_, err := mutants.Lookup("nope")
	assert.ErrorContains(t, err, "unknown mutant")
}
