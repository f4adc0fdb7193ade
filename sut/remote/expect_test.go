package remote_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// A long body asks first (Expect: 100-continue); a provider that answers
// that 417 gets the request again without it (wire.go). The resend is a
// request the provider receives, so it is one of the requests budget:
// with a budget of one request, the provider answering every expectation
// 417 receives one request, and the create ends with the budget spent.
// Regression: the resend was sent behind the meter's back (2 received).
func TestProvider_ExpectationResendIsMetered(t *testing.T) {
	var received atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		received.Add(1)
		if r.Header.Get("Expect") != "" {
			w.WriteHeader(http.StatusExpectationFailed)
			return
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20))
		w.WriteHeader(http.StatusRequestEntityTooLarge)
	}))
	t.Cleanup(s.Close)
	for _, tc := range []struct {
		limits remote.Limits
		want   int64
	}{
		{remote.Limits{MaxRequests: 1, MaxDuration: time.Minute}, 1},
		{remote.Limits{MaxRequests: 2, MaxCharges: 1, MaxDuration: time.Minute}, 2},
	} {
		received.Store(0)
		p, err := remote.New(remote.Config{BaseURL: s.URL, Limits: tc.limits})
		require.NoError(t, err)
		body := `{"amount":1099,"currency":"USD","source":"tok_visa","merchant_reference":"long","description":"` + strings.Repeat("x", 100<<10) + `"}`
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://provider/v1/charges", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set(models.IdempotencyKeyHeader, models.FormatKey("long-key"))
		req.Header.Set("Content-Type", "application/json")
		resp, err := p.Transport().RoundTrip(req)
		if tc.want == 1 {
			require.ErrorIs(t, err, remote.ErrBudget, "the resend does not fit a budget of one request")
		} else {
			require.NoError(t, err, "the resend fits a budget of two requests, one create")
			assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, "the answer to the body, not the 417")
			_ = resp.Body.Close()
		}
		assert.Equal(t, tc.want, received.Load(), "requests the provider received, budget %d", tc.limits.MaxRequests)
		reqs, posts := p.Meter().Used()
		assert.Equal(t, int(tc.want), reqs, "the meter counts what was sent")
		assert.Equal(t, 1, posts, "one create, sent again")
	}
}
