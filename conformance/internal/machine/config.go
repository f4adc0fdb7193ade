package machine

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/idemcheck/idemcheck/sut/backend"
	"github.com/idemcheck/idemcheck/sut/client/outside"
	"github.com/idemcheck/idemcheck/sut/client/pgstore"
	"github.com/idemcheck/idemcheck/sut/mutants"
	"github.com/idemcheck/idemcheck/sut/provider/redisstore"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// Config is what one sequence's world is built from: the provider under
// test and its store, the client's store and instances, the bounds of what
// a sequence draws, and the client under test. It is the world's share of
// conformance.Config (the field docs are there), resolved by WithDefaults.
type Config struct {
	Provider      string
	Remote        *remote.Provider
	MaxOrders     int
	MaxSchedule   int
	Processing    time.Duration
	Retention     time.Duration
	TimeScale     float64
	ProviderStore string
	RedisURL      string
	ClientStore   string
	PostgresURL   string
	Instances     int

	// PGStore is the run's PostgreSQL store (PrepareStore); nil otherwise.
	PGStore *outside.Store
	// Under is the client under test of CheckClient or CheckService; nil:
	// the reference client.
	Under *UnderTest
}

// The providers under test besides a URL.
const (
	ProviderEmbedded = "embedded"
	ProviderWireMock = "wiremock"
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

// Defaults of Config.
const (
	DefaultMaxOrders   = 3
	DefaultMaxSchedule = 6
	DefaultProcessing  = 50 * time.Millisecond
	DefaultRetention   = 24 * time.Hour
	DefaultTimeScale   = 1.0 / 15
	// DefaultRemoteTimeScale is TimeScale's default against a URL.
	DefaultRemoteTimeScale = 1.0 / 3
)

// WithDefaults is c with the default of every zero field, or an error
// naming the setting that is not supported.
func (c Config) WithDefaults() (Config, error) {
	if c.Provider == "" {
		c.Provider = ProviderEmbedded
	}
	if c.Provider != ProviderEmbedded && c.Provider != ProviderWireMock && !remote.IsURL(c.Provider) {
		return c, fmt.Errorf("conformance: IDEMCHECK_PROVIDER=%q is not supported (%q, %q or an http(s) base URL)", c.Provider, ProviderEmbedded, ProviderWireMock)
	}
	if err := c.providerStoreDefaults(); err != nil {
		return c, err
	}
	if c.TimeScale == 0 {
		c.TimeScale = DefaultTimeScale
		if c.IsRemote() {
			c.TimeScale = DefaultRemoteTimeScale
		}
	}
	if c.MaxOrders == 0 {
		c.MaxOrders = DefaultMaxOrders
	}
	if c.MaxSchedule == 0 {
		c.MaxSchedule = DefaultMaxSchedule
	}
	if c.Processing == 0 {
		c.Processing = DefaultProcessing
	}
	if c.Retention == 0 {
		c.Retention = DefaultRetention
	}
	return c, c.clientStoreDefaults()
}

// IsRemote reports whether the provider under test is a URL.
func (c Config) IsRemote() bool { return remote.IsURL(c.Provider) }

// remoteLookupLag is the lookup lag the URL's profile publishes
// (lookup_lag), 0 for a run that is not against a URL.
func (c Config) remoteLookupLag() time.Duration {
	if !c.IsRemote() || c.Remote == nil {
		return 0
	}
	return c.Remote.Profile().LookupLagDuration()
}

// OnRedis reports whether the embedded provider keeps its store in Redis.
func (c Config) OnRedis() bool { return c.ProviderStore == StoreRedis }

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

// CheckStoreMutant refuses a mutant planted in a store the run does not
// use: a Redis store mutant needs the provider on Redis, and an in-memory
// provider mutant would silently be the reference there.
func (c Config) CheckStoreMutant(m *mutants.Mutant) error {
	switch {
	case m == nil:
	case m.RedisStore != nil && !c.OnRedis():
		return fmt.Errorf("mutant %s plants its bug in the provider's Redis store; run it with IDEMCHECK_PROVIDER_STORE=redis", m.Name)
	case m.Provider != nil && c.OnRedis():
		return fmt.Errorf("mutant %s plants its bug in the in-memory provider; IDEMCHECK_PROVIDER_STORE=redis does not use it", m.Name)
	}
	return nil
}

// StoresFromEnv reads IDEMCHECK_CLIENT_STORE, IDEMCHECK_POSTGRES_URL and
// IDEMCHECK_CLIENT_INSTANCES into c.
func (c *Config) StoresFromEnv() error {
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
