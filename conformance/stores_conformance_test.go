package conformance_test

import (
	"net"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/conformance"
	"github.com/idemcheck/idemcheck/conformance/internal/machine"
)

// TestConformanceOnStores is the main job on the real stores, in the test
// command: the reference client with its attempts in PostgreSQL
// (IDEMCHECK_POSTGRES_URL; a database that does not answer fails it) and,
// like the in-memory store, with three client instances and two
// reconcilers over the one store, crashes at every checkout crash point
// included. The embedded provider, in the synctest bubble.
func TestConformanceOnStores(t *testing.T) {
	for _, store := range []string{conformance.StorePostgres, conformance.StoreMemory} {
		t.Run(store, func(t *testing.T) {
			cfg, err := conformance.FromEnv()
			if err != nil {
				t.Fatal(err)
			}
			cfg.Provider, cfg.Mutant = conformance.ProviderEmbedded, ""
			cfg.ClientStore, cfg.Instances = store, machine.MaxInstances
			conformance.Run(t, cfg)
		})
	}
}

// TestConformanceNamesTheVariableWhenPostgresDoesNotAnswer: a database
// that does not answer fails the main job before the first sequence, with
// a message naming IDEMCHECK_POSTGRES_URL; it never skips.
func TestConformanceNamesTheVariableWhenPostgresDoesNotAnswer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close()) // nothing listens there now
	out, failed, _ := runConformance(t, "1", "IDEMCHECK_CLIENT_STORE=postgres",
		"IDEMCHECK_POSTGRES_URL=postgres://postgres@"+addr+"/test?connect_timeout=5", "IDEMCHECK_MUTANT=")
	require.True(t, failed, out)
	require.Contains(t, out, "IDEMCHECK_POSTGRES_URL")
	require.Contains(t, out, "does not answer")
	require.NotContains(t, out, "SKIP")
	require.NotContains(t, out, "[rapid]", "no sequence ran")
}

func TestStoreVariablesAreChecked(t *testing.T) {
	for env, want := range map[string]string{
		"IDEMCHECK_CLIENT_STORE=redis":    `IDEMCHECK_CLIENT_STORE="redis" is not supported`,
		"IDEMCHECK_CLIENT_INSTANCES=4":    `IDEMCHECK_CLIENT_INSTANCES="4" is not a count of client instances (1 to 3)`,
		"IDEMCHECK_CLIENT_INSTANCES=zero": `IDEMCHECK_CLIENT_INSTANCES="zero"`,
	} {
		name, value, _ := strings.Cut(env, "=")
		t.Run(env, func(t *testing.T) {
			t.Setenv(name, value)
			_, err := conformance.FromEnv()
			require.Error(t, err)
			assert.Contains(t, err.Error(), want)
		})
	}
	t.Setenv("IDEMCHECK_CLIENT_STORE", "")
	t.Setenv("IDEMCHECK_CLIENT_INSTANCES", "")
	cfg, err := conformance.FromEnv()
	require.NoError(t, err)
	assert.Equal(t, conformance.StoreMemory, cfg.ClientStore)
	assert.Equal(t, 1, cfg.Instances)
}
