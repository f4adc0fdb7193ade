package backend

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/provider/redisstore"
)

// TestRedisProviderCrashKillsOnlyItsOwnProcess: a provider-crash kills
// the process of the crashing request alone; the process serving every
// other request lives on. Regression: the kill took the shared process,
// and a request inside it beside the crashing one died holding its key,
// answered 503 and left 409s for the lease that the checker, which
// abandons only the crashed request's key, judged a replay-consistent
// violation (TestConformanceOnRedis, a crash-during-checkout overlapping
// the next checkout).
func TestRedisProviderCrashKillsOnlyItsOwnProcess(t *testing.T) {
	hist := models.NewHistory()
	b, err := NewRedis(redisstore.URL(), DefaultRedisRetention, 0, nil, hist, time.Now)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, b.Close()) })
	shared := b.cur

	tr := faults.NewTransport(b.Wire(), hist, []faults.Fault{{Kind: faults.KindProviderCrash}, {Kind: faults.KindPass}})
	send := func(key string) (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodPost, b.BaseURL()+"/v1/charges", strings.NewReader(`{"amount":100,"currency":"TRY","source":"tok_visa","merchant_reference":"bookstore-`+key+`-a"}`))
		req.Header.Set(models.IdempotencyKeyHeader, models.FormatKey(key))
		return tr.RoundTrip(req)
	}
	_, err = send("k1")
	require.ErrorIs(t, err, faults.ErrInjected, "the crashing request's connection is reset")
	assert.False(t, shared.dead.Load(), "the process serving the other requests was killed with the crashing one")
	resp, err := send("k2")
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusCreated, resp.StatusCode)
}
