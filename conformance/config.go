package conformance

import (
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/conformance/internal/machine"
	"github.com/idemcheck/idemcheck/conformance/internal/run"
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
	// OnShrink, if set, is called after each check rapid runs while it
	// shrinks a violation, with the invariant being shrunk
	// ("at-most-one-charge-per-order") and the shopper steps of the
	// smallest failing sequence so far (reports.Progress.Shrink prints
	// "idemcheck: shrinking <invariant>: now 3 shopper steps, 20 shrink
	// checks" at a new minimum and at doubling intervals), so a long
	// shrink is not silent. It is called from the run's goroutines, one
	// call at a time per property.
	OnShrink func(invariant string, steps int)
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
	// Retention is the embedded provider's key retention window; default
	// 24h (20 s on Redis).
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
	// 004's Redis store at RedisURL, in real time, with a retention window
	// of 20 s unless Retention says otherwise; sut/backend's Redis).
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
	// share of -rapid.checks and its own seed; 0 or 1: one. Only the embedded provider with both stores in memory runs
	// more than one (parallelism). FromEnv reads IDEMCHECK_PARALLEL,
	// default runtime.NumCPU() — and 1 for a mutant run, unless
	// IDEMCHECK_PARALLEL is set.
	Parallel int
	// parallelAuto: Parallel is FromEnv's default, not asked for; a mutant
	// run then keeps one property.
	parallelAuto bool
	// Shard is the part of a run split across machines this run is
	// (seed range, and against a URL a share of the budgets; see Shard);
	// the zero value is the whole run. IDEMCHECK_SHARD ("i/n").
	Shard Shard
	// Concurrency is how many sequences a run against a URL, or against a
	// client service over HTTP (CheckService), keeps in flight at once,
	// each with its own keys, merchant references, seed and fail file,
	// all within the run's one set of budgets; 0 or 1: one at a time.
	// FromEnv reads IDEMCHECK_CONCURRENCY (1 to MaxConcurrency), default
	// DefaultConcurrency (4) against a URL and 1 for a client service,
	// whose N properties would each shrink and report a bug they share
	// (set the variable for more).
	Concurrency int
	// concurrencyAuto: Concurrency is FromEnv's default, not asked for; a
	// client service then runs one sequence at a time.
	concurrencyAuto bool
}

// DefaultConcurrency is Config.Concurrency's and Provider.Concurrency's
// default; MaxConcurrency its largest value.
const (
	DefaultConcurrency = run.DefaultConcurrency
	MaxConcurrency     = run.MaxConcurrency
)

// The providers under test besides a URL (Config.Provider).
const (
	ProviderEmbedded = "embedded"
	ProviderWireMock = "wiremock"
)

// The stores (Config.ClientStore, Config.ProviderStore).
const (
	StoreMemory   = "memory"
	StorePostgres = "postgres"
	StoreRedis    = "redis"
)

// Defaults of Config.
const (
	DefaultReportDir       = "idemcheck-reports"
	DefaultMaxOrders       = 3
	DefaultMaxSchedule     = 6
	DefaultMaxDeviations   = 10
	DefaultProcessing      = 50 * time.Millisecond
	DefaultRetention       = 24 * time.Hour
	DefaultTimeScale       = 1.0 / 15 // against WireMock and a checkout service
	DefaultRemoteTimeScale = 1.0 / 3  // against a URL
)

// FromEnv reads IDEMCHECK_PROVIDER, IDEMCHECK_MUTANT, IDEMCHECK_REPORT_DIR,
// IDEMCHECK_MAX_ORDERS, IDEMCHECK_MAX_SCHEDULE, IDEMCHECK_TIME_SCALE,
// IDEMCHECK_REPRODUCE, IDEMCHECK_CLIENT_STORE, IDEMCHECK_POSTGRES_URL,
// IDEMCHECK_CLIENT_INSTANCES, IDEMCHECK_PROVIDER_STORE,
// IDEMCHECK_REDIS_URL, IDEMCHECK_BASELINE, IDEMCHECK_MAX_DEVIATIONS,
// IDEMCHECK_PARALLEL (default: one property per CPU, one for a mutant),
// IDEMCHECK_CONCURRENCY (default DefaultConcurrency) and IDEMCHECK_SHARD ("i/n"), with every default applied. An unusable
// value is an error naming the variable.
func FromEnv() (Config, error) {
	rc, err := run.FromEnv()
	return fromRun(rc), err
}

// settings is c as the run reads it.
func (c Config) settings() run.Config {
	rc := run.Config{
		Config: machine.Config{Provider: c.Provider, Remote: c.Remote, MaxOrders: c.MaxOrders, MaxSchedule: c.MaxSchedule,
			Processing: c.Processing, Retention: c.Retention, TimeScale: c.TimeScale, ProviderStore: c.ProviderStore,
			RedisURL: c.RedisURL, ClientStore: c.ClientStore, PostgresURL: c.PostgresURL, Instances: c.Instances},
		OnSequence: c.OnSequence, OnShrink: c.OnShrink, Mutant: c.Mutant, ReportDir: c.ReportDir, Reproduce: c.Reproduce,
		Baseline: run.Baseline(c.Baseline), MaxDeviations: c.MaxDeviations, Parallel: c.Parallel,
		ParallelAuto: c.parallelAuto, Shard: run.Shard(c.Shard), Concurrency: c.Concurrency,
		ConcurrencyAuto: c.concurrencyAuto,
	}
	return rc
}

// run runs rc under t, with c.OnStart called on the same *Stats the call
// returns (one wrapper of the run's statistics per run).
func (c Config) run(t *testing.T, rc run.Config) *Stats {
	t.Helper()
	var pub *Stats
	wrap := func(s *run.Stats) *Stats {
		if s != nil && (pub == nil || pub.s != s) {
			pub = &Stats{s}
		}
		return pub
	}
	if f := c.OnStart; f != nil {
		rc.OnStart = func(s *run.Stats) { f(wrap(s)) }
	}
	return wrap(run.Run(t, rc))
}

// fromRun is the Config whose settings are rc (FromEnv's: no callbacks).
func fromRun(rc run.Config) Config {
	return Config{Provider: rc.Provider, Remote: rc.Remote, MaxOrders: rc.MaxOrders, MaxSchedule: rc.MaxSchedule,
		Processing: rc.Processing, Retention: rc.Retention, TimeScale: rc.TimeScale, ProviderStore: rc.ProviderStore,
		RedisURL: rc.RedisURL, ClientStore: rc.ClientStore, PostgresURL: rc.PostgresURL, Instances: rc.Instances,
		Mutant: rc.Mutant, ReportDir: rc.ReportDir, Reproduce: rc.Reproduce, Baseline: Baseline(rc.Baseline),
		MaxDeviations: rc.MaxDeviations, Parallel: rc.Parallel, parallelAuto: rc.ParallelAuto, Shard: Shard(rc.Shard),
		Concurrency: rc.Concurrency, concurrencyAuto: rc.ConcurrencyAuto}
}
