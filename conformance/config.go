package conformance

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/idemcheck/idemcheck/sut/client/outside"
	"github.com/idemcheck/idemcheck/sut/provider/redisstore"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// Config configures a conformance run. FromEnv reads it from the
// environment; the zero value of a field means its default.
type Config struct {
	// Provider is the provider under test: "embedded" (default, in
	// process on virtual time), "wiremock" (a real WireMock server, in real
	// time; IDEMCHECK_WIREMOCK_URL names one already running, else one is
	// started from the jar that `make deps` installs), or an http(s) base
	// URL (a sandbox or cmd/refprovider, in real time, through Remote).
	// IDEMCHECK_PROVIDER.
	Provider string
	// Remote is the remote provider when Provider is a URL: its dialect,
	// API key, profile and budgets. Nil: Run builds it from the environment
	// (remote.FromEnv: IDEMCHECK_DIALECT, IDEMCHECK_API_KEY,
	// IDEMCHECK_PROFILE, IDEMCHECK_MAX_*), refusing a live-looking key
	// before any request.
	Remote *remote.Provider
	// OnSequence, if set, is called after each drawn sequence that ran to
	// its end (reports.Progress.Sequence prints a running count), so a long
	// remote run is not silent.
	OnSequence func()
	// OnStart, if set, is called with the run's statistics when the
	// property starts (before any sequence), so that a caller holds them
	// when t fails and Run never returns (cmd/idemcheck: the deviations
	// and run folder of a failed run).
	OnStart func(*Stats)
	// Mutant names a planted bug to swap in (see sut/mutants), "" for the
	// reference client and provider. IDEMCHECK_MUTANT.
	Mutant string
	// ReportDir is where failure reports are written; default
	// "idemcheck-reports" in the package directory (git-ignored).
	// IDEMCHECK_REPORT_DIR.
	ReportDir string
	// MaxOrders bounds the orders one sequence opens; default 3.
	MaxOrders int
	// MaxSchedule bounds the length of the fault schedule drawn for each
	// step (what happens to its n-th request); default 6.
	MaxSchedule int
	// Processing is the embedded provider's base processing time per
	// request; default 50ms.
	Processing time.Duration
	// Retention is the embedded provider's key retention window; default 24h.
	Retention time.Duration
	// TimeScale turns the client's timeouts and the drawn fault durations
	// into real time against WireMock or a remote provider; default 1/15
	// against WireMock (attempt timeout 3 s → 200 ms, total 10 s → 667 ms,
	// slow processing 15 s → 1 s) and 1/3 against a URL (attempt timeout
	// 1 s, for a sandbox's own latency). Ages that
	// reconciliation judges (MinAge 2m, AbandonAfter 30m) are not scaled:
	// time-passes moves the run's clock without waiting.
	// IDEMCHECK_TIME_SCALE.
	TimeScale float64
	// ProviderStore is where the embedded provider keeps its keys and
	// charges: "memory" (default, virtual time) or "redis" (seed article
	// 004's Redis store at RedisURL, in real time; see backend_redis.go).
	// IDEMCHECK_PROVIDER_STORE.
	ProviderStore string
	// RedisURL is the Redis of ProviderStore "redis"; default
	// redis://127.0.0.1:6379/0. IDEMCHECK_REDIS_URL.
	RedisURL string
	// Reproduce is how many times a failing run replays its shrunk failure
	// from rapid's fail file, in child processes of the test binary, to say
	// "reproduced N/N" or "flaky (k/N)" in the report; 0 (default) checks
	// nothing. IDEMCHECK_REPRODUCE (10 is the usual value).
	Reproduce int
	// ClientStore is where the reference client keeps orders and attempts:
	// "memory" (default) or "postgres" (sut/client/pgstore at PostgresURL:
	// a schema per run, emptied before each sequence, dropped after the
	// run). IDEMCHECK_CLIENT_STORE.
	ClientStore string
	// PostgresURL is the database of the "postgres" store; default
	// pgstore.DefaultURL. IDEMCHECK_POSTGRES_URL.
	PostgresURL string
	// Instances is how many client instances share the store and the
	// provider, 1 to 3 (default 1): with 2 or more a shopper's requests
	// for one order land on different instances, and a reconciliation
	// races a second reconciler or a shopper's resend.
	// IDEMCHECK_CLIENT_INSTANCES.
	Instances int

	pgStore *outside.Store // the run's PostgreSQL store (prepareStore)
	under   *underTest     // the client under test of CheckClient; nil: the reference client
	// Baseline lists the acknowledged deviations: one it lists is reported
	// KNOWN, not FAIL (see Baseline for the file's format); none by
	// default. IDEMCHECK_BASELINE names the file.
	Baseline Baseline
	// MaxDeviations is how many distinct deviations a run against a URL
	// records before it stops searching (1: stop at the first, as rapid
	// alone does); default 10. IDEMCHECK_MAX_DEVIATIONS.
	MaxDeviations int
	// Parallel is how many independent rapid properties the run checks at
	// once, as the subtests p0 … p<N-1> of the run's test, each with its
	// share of -rapid.checks and its own seed (parallel.go); 0 or 1: one,
	// as before. Only the embedded provider with both stores in memory runs
	// more than one (parallelism). FromEnv reads IDEMCHECK_PARALLEL,
	// default runtime.NumCPU() — and 1 for a mutant run, unless
	// IDEMCHECK_PARALLEL is set.
	Parallel int
	// parallelAuto: Parallel is FromEnv's default, not asked for; a mutant
	// run then keeps one property (parallelism).
	parallelAuto bool
	// Shard is the part of a run split across machines this run is
	// (seed range, and against a URL a share of the budgets; see Shard);
	// the zero value is the whole run. IDEMCHECK_SHARD ("i/n").
	Shard Shard
}

// The providers under test.
const (
	ProviderEmbedded = "embedded"
	ProviderWireMock = "wiremock"
)

// Defaults of Config.
const (
	DefaultReportDir   = "idemcheck-reports"
	DefaultMaxOrders   = 3
	DefaultMaxSchedule = 6
	// DefaultMaxDeviations is MaxDeviations' default.
	DefaultMaxDeviations = 10
	DefaultProcessing    = 50 * time.Millisecond
	DefaultRetention     = 24 * time.Hour
	DefaultTimeScale     = 1.0 / 15
	// DefaultRemoteTimeScale is TimeScale's default against a URL.
	DefaultRemoteTimeScale = 1.0 / 3
)

// FromEnv reads IDEMCHECK_PROVIDER, IDEMCHECK_MUTANT, IDEMCHECK_REPORT_DIR,
// IDEMCHECK_MAX_ORDERS, IDEMCHECK_MAX_SCHEDULE, IDEMCHECK_REPRODUCE,
// IDEMCHECK_CLIENT_STORE, IDEMCHECK_POSTGRES_URL, IDEMCHECK_CLIENT_INSTANCES,
// IDEMCHECK_PROVIDER_STORE, IDEMCHECK_REDIS_URL, IDEMCHECK_BASELINE,
// IDEMCHECK_MAX_DEVIATIONS, IDEMCHECK_PARALLEL and IDEMCHECK_SHARD. An
// unusable value is an error naming the variable.
func FromEnv() (Config, error) {
	c := Config{
		Provider:      os.Getenv("IDEMCHECK_PROVIDER"),
		Mutant:        os.Getenv("IDEMCHECK_MUTANT"),
		ReportDir:     os.Getenv("IDEMCHECK_REPORT_DIR"),
		ProviderStore: os.Getenv("IDEMCHECK_PROVIDER_STORE"),
		RedisURL:      os.Getenv(redisstore.EnvURL),
	}
	for name, dst := range map[string]*int{"IDEMCHECK_MAX_ORDERS": &c.MaxOrders, "IDEMCHECK_MAX_SCHEDULE": &c.MaxSchedule, "IDEMCHECK_MAX_DEVIATIONS": &c.MaxDeviations} {
		if v := os.Getenv(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return c, fmt.Errorf("conformance: %s=%q is not a positive integer", name, v)
			}
			*dst = n
		}
	}
	if err := c.storesFromEnv(); err != nil {
		return c, err
	}
	c.Parallel, c.parallelAuto = runtime.NumCPU(), true
	if v := os.Getenv(ParallelEnv); v != "" {
		c.parallelAuto = false
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return c, fmt.Errorf("conformance: %s=%q is not a positive number of properties", ParallelEnv, v)
		}
		c.Parallel = n
	}
	var err error
	if c.Shard, err = shardFromEnv(); err != nil {
		return c, err
	}
	if v := os.Getenv("IDEMCHECK_TIME_SCALE"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 || f > 1 {
			return c, fmt.Errorf("conformance: IDEMCHECK_TIME_SCALE=%q is not a number in (0, 1]", v)
		}
		c.TimeScale = f
	}
	if v := os.Getenv("IDEMCHECK_REPRODUCE"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return c, fmt.Errorf("conformance: IDEMCHECK_REPRODUCE=%q is not a count of replays (0 or more)", v)
		}
		c.Reproduce = n
	}
	if v := os.Getenv("IDEMCHECK_BASELINE"); v != "" {
		b, err := LoadBaseline(v)
		if err != nil {
			return c, err
		}
		c.Baseline = b
	}
	return c.withDefaults()
}

func (c Config) withDefaults() (Config, error) {
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
		if c.isRemote() {
			c.TimeScale = DefaultRemoteTimeScale
		}
	}
	if c.ReportDir == "" {
		c.ReportDir = DefaultReportDir
	}
	if c.MaxOrders == 0 {
		c.MaxOrders = DefaultMaxOrders
	}
	if c.MaxSchedule == 0 {
		c.MaxSchedule = DefaultMaxSchedule
	}
	if c.MaxDeviations == 0 {
		c.MaxDeviations = DefaultMaxDeviations
	}
	if c.Processing == 0 {
		c.Processing = DefaultProcessing
	}
	if c.Retention == 0 {
		c.Retention = DefaultRetention
	}
	return c, c.clientStoreDefaults()
}

// isRemote reports whether the provider under test is a URL.
func (c Config) isRemote() bool { return remote.IsURL(c.Provider) }

// remoteProvider returns c.Remote, or builds it from the environment for
// the URL in c.Provider (remote.New refuses a live-looking key or a
// production profile here, before any request).
func (c Config) remoteProvider() (*remote.Provider, error) {
	if c.Remote != nil {
		return c.Remote, nil
	}
	rc, err := remote.FromEnv()
	if err != nil {
		return nil, err
	}
	rc.BaseURL = c.Provider
	rc.Limits = c.Shard.limits(rc.Limits) // this shard's share of the budgets
	return remote.New(rc)
}
