package remote_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/internal/hostile"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// Regression (issue 11, left out by the catalogue): a provider echoing the
// key upper-cased, or as a header name (net/http canonicalizes it,
// "X-Key-Sk_test_hostilesecret0123"), got it past the wire's scrubber,
// which matched the key only in its own case.
func TestProvider_ScrubsAKeyInAnyCase(t *testing.T) {
	s := hostile.Start(t, hostile.Options{Mode: hostile.EchoCase})
	p := against(t, s, remote.Limits{MaxDuration: time.Minute})
	low := strings.ToLower(string(hostileKey))
	resp, err := create(t.Context(), p, "echo-case")
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", b)
	assert.NotContains(t, strings.ToLower(string(b)), low)
	assert.Contains(t, string(b), `"ch_[redacted]_`)
	for k, vs := range resp.Header {
		assert.NotContains(t, strings.ToLower(k+": "+strings.Join(vs, ", ")), low)
	}
	assert.Equal(t, "1", resp.Header.Get("X-Key-"+remote.RedactedKey))
	assert.Equal(t, remote.RedactedKey, resp.Header.Get("X-Echo"))

	charges, err := p.Find(t.Context(), "echo-case")
	require.NoError(t, err)
	require.Len(t, charges, 1)
	for _, c := range charges {
		assert.NotContains(t, strings.ToLower(c.ID), low)
	}
}
