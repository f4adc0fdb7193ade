package conformance_test

import (
	"testing"

	"github.com/idemcheck/idemcheck/conformance"
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
			cfg.ClientStore, cfg.Instances = store, conformance.MaxInstances
			conformance.Run(t, cfg)
		})
	}
}
