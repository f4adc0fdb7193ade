package machine

import (
	"context"
	"fmt"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/client"
	"github.com/idemcheck/idemcheck/sut/client/outside"
	"github.com/idemcheck/idemcheck/sut/client/pgstore"
	"github.com/idemcheck/idemcheck/sut/mutants"
)

// clientStoreDefaults applies the defaults of the client's store fields.
func (c *Config) clientStoreDefaults() error {
	switch c.ClientStore {
	case "":
		c.ClientStore = StoreMemory
	case StoreMemory, StorePostgres:
	default:
		return fmt.Errorf("conformance: IDEMCHECK_CLIENT_STORE=%q is not supported (%q or %q)", c.ClientStore, StoreMemory, StorePostgres)
	}
	if c.PostgresURL == "" {
		c.PostgresURL = pgstore.DefaultURL
	}
	if c.Instances == 0 {
		c.Instances = 1
	}
	if c.Instances < 1 || c.Instances > MaxInstances {
		return fmt.Errorf("conformance: Instances=%d is not 1 to %d", c.Instances, MaxInstances)
	}
	return nil
}

// WithNeeds is c with what mutant m needs to show its bug: the PostgreSQL
// store, several client instances.
func (c Config) WithNeeds(m *mutants.Mutant) Config {
	if m == nil {
		return c
	}
	if m.ClientStore != "" {
		c.ClientStore = m.ClientStore
	}
	c.Instances = max(c.Instances, m.Instances)
	return c
}

// PrepareStore opens the run's PostgreSQL store when the store is
// "postgres" — failing, before any sequence, with a message naming
// IDEMCHECK_POSTGRES_URL when the database does not answer — in a schema
// of the run's own, behind an outside.Store, and returns c holding it and a
// cleanup that drops the schema. Each sequence empties it first
// (openStore): sequences of one run never overlap, and the schema's DDL
// and the connections are paid once per run. Call it outside any bubble.
func (c Config) PrepareStore(ctx context.Context) (Config, func(), error) {
	if c.ClientStore != StorePostgres {
		return c, func() {}, nil
	}
	s, err := pgstore.Open(ctx, c.PostgresURL, pgstore.NewSchemaName("run"))
	if err != nil {
		return c, nil, fmt.Errorf("conformance: IDEMCHECK_CLIENT_STORE=postgres: %w", err)
	}
	out, stop := outside.New(s, pgstore.MaxConns)
	c.PGStore = out
	return c, func() {
		stop()
		_ = s.Drop(context.Background())
	}, nil
}

// openStore opens the client's store for one sequence: a new in-memory
// Store, or the run's PostgreSQL store, emptied.
func openStore(cfg Config) (client.AttemptStore, error) {
	if cfg.ClientStore != StorePostgres {
		return client.NewStore(), nil
	}
	if cfg.PGStore == nil {
		return nil, fmt.Errorf("conformance: the postgres store is not open (Run opens it)")
	}
	if err := cfg.PGStore.Reset(); err != nil {
		return nil, fmt.Errorf("conformance: empty the client's store: %w", err)
	}
	return cfg.PGStore, nil
}

// instanceName is the Config.Instance of client instance i (from 0) of n:
// "" for a single instance, as in production with one process.
func instanceName(i, n int) string {
	if n == 1 {
		return ""
	}
	return fmt.Sprintf("api-%d", i+1)
}

// attempts is every payment attempt the client's view holds, or none when
// it has no view or the view could not be read (the next snapshot reports
// the error).
func (w *World) attempts() []models.PaymentAttempt {
	v, _ := w.view()
	return v.Attempts
}
