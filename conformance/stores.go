package conformance

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/backend"
	"github.com/idemcheck/idemcheck/sut/client"
	"github.com/idemcheck/idemcheck/sut/client/outside"
	"github.com/idemcheck/idemcheck/sut/client/pgstore"
	"github.com/idemcheck/idemcheck/sut/mutants"
	"github.com/idemcheck/idemcheck/sut/provider/redisstore"
)

// The client's attempt stores (Config.ClientStore); StoreMemory is also
// Config.ProviderStore's default, and StoreRedis its Redis store.
const (
	StoreMemory   = "memory"
	StorePostgres = "postgres"
	StoreRedis    = "redis"
)

// MaxInstances bounds Config.Instances.
const MaxInstances = 3

// storesFromEnv reads IDEMCHECK_CLIENT_STORE, IDEMCHECK_POSTGRES_URL and
// IDEMCHECK_CLIENT_INSTANCES into c.
func (c *Config) storesFromEnv() error {
	c.ClientStore = os.Getenv("IDEMCHECK_CLIENT_STORE")
	c.PostgresURL = os.Getenv(pgstore.EnvURL)
	if v := os.Getenv("IDEMCHECK_CLIENT_INSTANCES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxInstances {
			return fmt.Errorf("conformance: IDEMCHECK_CLIENT_INSTANCES=%q is not a count of client instances (1 to %d)", v, MaxInstances)
		}
		c.Instances = n
	}
	return nil
}

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

// withNeeds is c with what mutant m needs to show its bug: the PostgreSQL
// store, several client instances.
func (c Config) withNeeds(m *mutants.Mutant) Config {
	if m == nil {
		return c
	}
	if m.ClientStore != "" {
		c.ClientStore = m.ClientStore
	}
	c.Instances = max(c.Instances, m.Instances)
	return c
}

// prepareStore opens the run's PostgreSQL store when the store is
// "postgres" — failing, before any sequence, with a message naming
// IDEMCHECK_POSTGRES_URL when the database does not answer — in a schema
// of the run's own, behind an outside.Store, and returns c holding it and a
// cleanup that drops the schema. Each sequence empties it first
// (openStore): sequences of one run never overlap, and the schema's DDL
// and the connections are paid once per run. Call it outside any bubble.
func (c Config) prepareStore(ctx context.Context) (Config, func(), error) {
	if c.ClientStore != StorePostgres {
		return c, func() {}, nil
	}
	s, err := pgstore.Open(ctx, c.PostgresURL, pgstore.NewSchemaName("run"))
	if err != nil {
		return c, nil, fmt.Errorf("conformance: IDEMCHECK_CLIENT_STORE=postgres: %w", err)
	}
	out, stop := outside.New(s, pgstore.MaxConns)
	c.pgStore = out
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
	if cfg.pgStore == nil {
		return nil, fmt.Errorf("conformance: the postgres store is not open (Run opens it)")
	}
	if err := cfg.pgStore.Reset(); err != nil {
		return nil, fmt.Errorf("conformance: empty the client's store: %w", err)
	}
	return cfg.pgStore, nil
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
func (w *world) attempts() []models.PaymentAttempt {
	v, _ := w.view()
	return v.Attempts
}

// providerStoreDefaults checks ProviderStore and sets the Redis run's defaults.
func (c *Config) providerStoreDefaults() error {
	switch c.ProviderStore {
	case "":
		c.ProviderStore = StoreMemory
	case StoreMemory:
	case StoreRedis:
		if c.Provider != ProviderEmbedded {
			return fmt.Errorf("conformance: IDEMCHECK_PROVIDER_STORE=redis puts the embedded provider on Redis; IDEMCHECK_PROVIDER=%s is another provider", c.Provider)
		}
		if c.RedisURL == "" {
			c.RedisURL = redisstore.DefaultURL
		}
		if c.Retention == 0 {
			c.Retention = backend.DefaultRedisRetention
		}
	default:
		return fmt.Errorf("conformance: IDEMCHECK_PROVIDER_STORE=%q is not supported (%q or %q)", c.ProviderStore, StoreMemory, StoreRedis)
	}
	return nil
}

// onRedis reports whether the embedded provider keeps its store in Redis.
func (c Config) onRedis() bool { return c.ProviderStore == StoreRedis }

// checkStoreMutant refuses a mutant planted in a store the run does not
// use: a Redis store mutant needs the provider on Redis, and an in-memory
// provider mutant would silently be the reference there.
func (c Config) checkStoreMutant(m *mutants.Mutant) error {
	switch {
	case m == nil:
	case m.RedisStore != nil && !c.onRedis():
		return fmt.Errorf("mutant %s plants its bug in the provider's Redis store; run it with IDEMCHECK_PROVIDER_STORE=redis", m.Name)
	case m.Provider != nil && c.onRedis():
		return fmt.Errorf("mutant %s plants its bug in the in-memory provider; IDEMCHECK_PROVIDER_STORE=redis does not use it", m.Name)
	}
	return nil
}
