package conformance_test

import (
	"context"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/conformance"
	"github.com/idemcheck/idemcheck/sut/provider/redisstore"
	"github.com/idemcheck/idemcheck/sut/provider/server"
)

// refProviderHandler is what TestCertify serves in process:
// cmd/refprovider's handler, with its keys and charges in Redis (under a
// prefix of the test's own, deleted after it) when
// IDEMCHECK_PROVIDER_STORE=redis, as `refprovider -store redis` serves it.
func refProviderHandler(t *testing.T) http.Handler {
	t.Helper()
	if os.Getenv("IDEMCHECK_PROVIDER_STORE") != conformance.StoreRedis {
		h, err := server.Handler("", 0, 50*time.Millisecond)
		require.NoError(t, err)
		return h
	}
	return redisRefProvider(t, "")
}

// redisRefProvider is refprovider -store redis serving mutant ("" for the
// reference) under a prefix of t's own, deleted when t ends.
func redisRefProvider(t *testing.T, mutant string) http.Handler {
	t.Helper()
	c, err := redisstore.Connect(t.Context(), redisstore.URL())
	require.NoError(t, err) // names IDEMCHECK_REDIS_URL
	prefix := "idemcheck-test:certify:" + uuid.NewString() + ":"
	t.Cleanup(func() { _ = c.Close() })
	t.Cleanup(func() { require.NoError(t, redisstore.Clear(context.Background(), c, prefix)) }) // runs first
	h, err := server.RedisHandler(mutant, 0, 50*time.Millisecond, server.Redis{Client: c, Prefix: prefix})
	require.NoError(t, err)
	return h
}
