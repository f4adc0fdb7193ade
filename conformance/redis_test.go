package conformance_test

import (
	"net"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/conformance"
)

// TestConformanceOnRedis is the main job with the reference provider on
// seed article 004's Redis store (IDEMCHECK_PROVIDER_STORE=redis), in real
// time against the Redis of IDEMCHECK_REDIS_URL: every invariant holds.
func TestConformanceOnRedis(t *testing.T) {
	t.Parallel() // real time: it mostly waits
	cfg, err := conformance.FromEnv()
	require.NoError(t, err)
	cfg.Provider, cfg.ProviderStore, cfg.Mutant = conformance.ProviderEmbedded, conformance.StoreRedis, ""
	conformance.Run(t, cfg)
}

// TestRedisUnreachableFailsNamingTheVariable: a Redis that does not
// answer fails the run before any sequence, naming IDEMCHECK_REDIS_URL.
func TestRedisUnreachableFailsNamingTheVariable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now
	out, failed, _ := runConformance(t, "1", "IDEMCHECK_PROVIDER_STORE=redis", "IDEMCHECK_REDIS_URL=redis://"+addr+"/0")
	require.True(t, failed, out)
	require.Contains(t, out, "IDEMCHECK_REDIS_URL")
	require.Contains(t, out, "does not answer")
	require.NotContains(t, out, "[rapid]", "refused before rapid draws anything")
}

// TestStoreMutantsNeedTheirStore: a Redis store mutant without Redis, or an
// in-memory provider mutant on Redis, is refused instead of running as the
// reference.
func TestStoreMutantsNeedTheirStore(t *testing.T) {
	out, failed, _ := runConformance(t, "1", "IDEMCHECK_MUTANT=redis-get-then-set")
	require.True(t, failed, out)
	require.Contains(t, out, "run it with IDEMCHECK_PROVIDER_STORE=redis")
	out, failed, _ = runConformance(t, "1", "IDEMCHECK_MUTANT=no-inflight-lock", "IDEMCHECK_PROVIDER_STORE=redis")
	require.True(t, failed, out)
	require.Contains(t, out, "plants its bug in the in-memory provider")
}
