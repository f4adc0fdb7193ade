package faults_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
)

// refused is a wire error for a request that never left.
type refused struct{}

func (refused) Error() string { return "budget spent; request not sent" }
func (refused) NotSent() bool { return true }

// TestTransport_ARequestTheWireRefusedWasNotForwarded: a request the wire
// refused before it left (a remote run's budget) is recorded as never
// forwarded. Regression (fresh-clone review): it showed as a request still
// processing at the provider, in the report's table and diagram.
func TestTransport_ARequestTheWireRefusedWasNotForwarded(t *testing.T) {
	h := models.NewHistory()
	wire := &faults.RemoteWire{History: h, Next: roundTripper(func(*http.Request) (*http.Response, error) { return nil, refused{} })}
	c := &http.Client{Transport: faults.NewTransport(wire, h, nil), Timeout: time.Minute}
	req, err := http.NewRequest(http.MethodPost, "http://provider/v1/charges", strings.NewReader(`{"amount":1}`))
	require.NoError(t, err)
	req.Header.Set(models.IdempotencyKeyHeader, models.FormatKey("k"))
	_, err = c.Do(req)
	require.Error(t, err)
	exs := h.Snapshot().Exchanges
	require.Len(t, exs, 1)
	assert.False(t, exs[0].Forwarded)
	assert.Zero(t, exs[0].ArrivalSeq)
	assert.True(t, exs[0].ArrivedAt.IsZero())
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
