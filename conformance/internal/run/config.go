package run

import (
	"fmt"
	"os"
	"runtime"
	"strconv"

	"github.com/idemcheck/idemcheck/conformance/internal/machine"
	"github.com/idemcheck/idemcheck/sut/provider/redisstore"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// Config is conformance.Config resolved for a run (the field docs are
// there): the world's share (machine.Config) and what the run around the
// property needs.
type Config struct {
	machine.Config
	OnSequence func()
	// OnShrink, if set, is called after each check rapid runs while it
	// shrinks a violation, with the invariant being shrunk and the
	// shopper steps of the smallest failing sequence so far.
	OnShrink      func(invariant string, steps int)
	OnStart       func(*Stats)
	Mutant        string
	ReportDir     string
	Reproduce     int
	Baseline      Baseline
	MaxDeviations int
	Parallel      int
	// ParallelAuto: Parallel is FromEnv's default, not asked for; a
	// mutant run then keeps one property (parallelism).
	ParallelAuto bool
	Shard        Shard
	// Concurrency is how many sequences a run against a URL or a client
	// service over HTTP keeps in flight at once (concurrent.go); 0 or 1:
	// one. FromEnv reads IDEMCHECK_CONCURRENCY, default DefaultConcurrency.
	Concurrency int
	// ConcurrencyAuto: Concurrency is FromEnv's default, not asked for; a
	// client service over HTTP then runs one sequence at a time.
	ConcurrencyAuto bool
	// OnFound, if set, is called when a round of a run against a URL finds
	// its first violation, with its category, before rapid shrinks it.
	OnFound func(category string)
	// OnShrinkEnd, if set, is called once when the run ends a shrink
	// before rapid does (a known deviation, its cap, a budget), with why.
	OnShrinkEnd func(invariant string, steps int, why string)
	// Shown are the invariants the requirements of the same certification
	// FAILed on (shrinkcap.go): their deviations are not shrunk again.
	Shown Shown
}

// Defaults of Config beside machine's.
const (
	DefaultReportDir     = "idemcheck-reports"
	DefaultMaxDeviations = 10
)

// ParallelEnv is the variable that sets Config.Parallel.
const ParallelEnv = "IDEMCHECK_PARALLEL"

// FromEnv is conformance.FromEnv: it reads IDEMCHECK_PROVIDER, IDEMCHECK_MUTANT, IDEMCHECK_REPORT_DIR,
// IDEMCHECK_MAX_ORDERS, IDEMCHECK_MAX_SCHEDULE, IDEMCHECK_REPRODUCE,
// IDEMCHECK_CLIENT_STORE, IDEMCHECK_POSTGRES_URL, IDEMCHECK_CLIENT_INSTANCES,
// IDEMCHECK_PROVIDER_STORE, IDEMCHECK_REDIS_URL, IDEMCHECK_BASELINE,
// IDEMCHECK_MAX_DEVIATIONS, IDEMCHECK_PARALLEL, IDEMCHECK_CONCURRENCY and IDEMCHECK_SHARD. An
// unusable value is an error naming the variable.
func FromEnv() (Config, error) {
	c := Config{
		Config: machine.Config{
			Provider:      os.Getenv("IDEMCHECK_PROVIDER"),
			ProviderStore: os.Getenv("IDEMCHECK_PROVIDER_STORE"),
			RedisURL:      os.Getenv(redisstore.EnvURL),
		},
		Mutant:    os.Getenv("IDEMCHECK_MUTANT"),
		ReportDir: os.Getenv("IDEMCHECK_REPORT_DIR"),
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
	if err := c.StoresFromEnv(); err != nil {
		return c, err
	}
	c.Parallel, c.ParallelAuto = runtime.NumCPU(), true
	if v := os.Getenv(ParallelEnv); v != "" {
		c.ParallelAuto = false
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return c, fmt.Errorf("conformance: %s=%q is not a positive number of properties", ParallelEnv, v)
		}
		c.Parallel = n
	}
	if err := c.concurrencyFromEnv(); err != nil {
		return c, err
	}
	var err error
	if c.Shard, err = ShardFromEnv(); err != nil {
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
	return c.WithDefaults()
}

// WithDefaults is c with the default of every zero field, or an error
// naming the setting that is not supported.
func (c Config) WithDefaults() (Config, error) {
	if c.ReportDir == "" {
		c.ReportDir = DefaultReportDir
	}
	if c.MaxDeviations == 0 {
		c.MaxDeviations = DefaultMaxDeviations
	}
	var err error
	c.Config, err = c.Config.WithDefaults()
	return c, err
}

// RemoteProvider returns c.Remote, or builds it from the environment for
// the URL in c.Provider (remote.New refuses a live-looking key or a
// production profile here, before any request).
func (c Config) RemoteProvider() (*remote.Provider, error) {
	if c.Remote != nil {
		return c.Remote, nil
	}
	rc, err := remote.FromEnv()
	if err != nil {
		return nil, err
	}
	rc.BaseURL = c.Provider
	rc.Limits = c.Shard.Limits(rc.Limits) // this shard's share of the budgets
	return remote.New(rc)
}
