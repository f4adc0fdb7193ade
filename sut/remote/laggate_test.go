package remote_test

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/sut/remote"
)

// roundTripFunc is an http.RoundTripper of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Against a URL that publishes a lookup lag, a lookup after a create
// waits the lag (on the bubble's clock here, in real time in a run);
// after only lookups, or a second time, it does not wait; a context that
// ends first ends the wait with its error.
func TestLagGateWaitsTheLagAfterACreate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ok := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: r}, nil
		})
		g := remote.NewLagGate(ok, 45*time.Second)
		send := func(method string) {
			req, err := http.NewRequest(method, "http://provider.idemcheck.invalid/v1/charges", nil)
			assert.NoError(t, err)
			resp, err := g.RoundTrip(req)
			assert.NoError(t, err)
			_ = resp.Body.Close()
		}
		waited := func(ctx context.Context) (time.Duration, error) {
			start := time.Now()
			err := g.Wait(ctx)
			return time.Since(start), err
		}
		send(http.MethodGet)
		d, err := waited(t.Context())
		assert.Zero(t, d, "no create: no wait")
		assert.NoError(t, err)
		send(http.MethodPost)
		d, err = waited(t.Context())
		assert.Equal(t, 45*time.Second, d)
		assert.NoError(t, err)
		d, _ = waited(t.Context())
		assert.Zero(t, d, "the lag already passed")

		send(http.MethodPost)
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		d, err = waited(ctx)
		assert.Equal(t, 10*time.Second, d)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
	})
}
