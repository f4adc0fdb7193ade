package remote_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/internal/hostile"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// Regression (issue 11, left out by the catalogue): a live key pasted into
// the provider URL (user info, path or query, in any case or
// percent-encoded) was sent with every request; only the API keys were
// checked. It is refused before any request, and the error does not
// repeat it.
func TestNew_RefusesALiveKeyInTheURL(t *testing.T) {
	s := hostile.Start(t, hostile.Options{})
	host := strings.TrimPrefix(s.URL, "http://")
	for name, u := range map[string]string{
		"query":          s.URL + "/?token=sk_live_0123456789",
		"user info":      "http://sk_live_0123456789@" + host,
		"path, upper":    s.URL + "/RK_LIVE_0123456789/",
		"percent-coded":  s.URL + "/?k=%70k_live_0123456789",
		"razorpay, path": s.URL + "/rzp_live_0123456789",
	} {
		_, err := remote.New(remote.Config{BaseURL: u, APIKey: hostileKey, Limits: remote.Limits{MaxDuration: time.Minute}})
		require.ErrorIs(t, err, remote.ErrLiveCredential, name)
		assert.NotContains(t, err.Error(), "0123456789", name)
	}
	p, err := remote.New(remote.Config{BaseURL: "http://sk_test_0123456789@" + host, APIKey: hostileKey, Limits: remote.Limits{MaxDuration: time.Minute}})
	require.NoError(t, err, "a test key in the URL is no live marker")
	_, err = p.Find(t.Context(), "x")
	require.NoError(t, err)
	reqs, _, _ := s.Counts()
	assert.Equal(t, 1, reqs, "only the test-key provider's lookup reached the server")
}

// Regression: a live marker in a URL the caller gave (idemcheck certify's
// argument) was reported as "IDEMCHECK_PROVIDER has a live marker", a
// variable never set. The error names the provider URL then, and
// IDEMCHECK_PROVIDER only when the URL came from it.
func TestValidate_NamesWhereTheLiveURLCameFrom(t *testing.T) {
	u := "http://127.0.0.1:1/?token=sk_live_0123456789"
	t.Setenv("IDEMCHECK_PROVIDER", "")
	_, err := remote.Config{BaseURL: u, Limits: remote.Limits{MaxDuration: time.Minute}}.Validate()
	require.ErrorIs(t, err, remote.ErrLiveCredential)
	assert.Contains(t, err.Error(), "the provider URL has a live marker")
	assert.NotContains(t, err.Error(), "IDEMCHECK_PROVIDER")

	t.Setenv("IDEMCHECK_PROVIDER", u)
	c, err := remote.FromEnv()
	require.NoError(t, err)
	_, err = c.Validate()
	require.ErrorIs(t, err, remote.ErrLiveCredential)
	assert.Contains(t, err.Error(), "IDEMCHECK_PROVIDER has a live marker")
}
