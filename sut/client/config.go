package client

import (
	"context"
	"net/http"
	"time"

	"github.com/google/uuid"
)

// The defaults of Config. The timeouts and the retry delay are the
// appsettings.json values of seed article 000 ("attempt timeout 3 saniye
// kaldı, total timeout 4'ten 10 saniyeye çıktı ve retry gecikmesi 1 saniye
// oldu"); the reconciliation periods are its PaymentReconciliationJob's
// (every minute, attempts older than 2 minutes, abandoned after 30 minutes).
const (
	DefaultAttemptTimeout = 3 * time.Second
	DefaultTotalTimeout   = 10 * time.Second
	DefaultRetryDelay     = 1 * time.Second
	DefaultMaxRetries     = 3
	DefaultMinAge         = 2 * time.Minute
	DefaultAbandonAfter   = 30 * time.Minute
	DefaultInterval       = 1 * time.Minute
	// DefaultKeyRetention is the provider's published key retention
	// window (docs/provider-api.md); DefaultStaleKeyMargin the margin the
	// client keeps below it.
	DefaultKeyRetention   = 24 * time.Hour
	DefaultStaleKeyMargin = 1 * time.Hour
)

// The defaults of BreakerConfig: the circuit breaker of .NET's standard
// resilience pipeline, which seed article 000 uses and whose opening under
// retries it discusses ("%10 hata oranında ve en az 100 istekte açılıyor").
const (
	DefaultFailureRatio      = 0.1
	DefaultMinimumThroughput = 100
	DefaultSamplingDuration  = 30 * time.Second
	DefaultBreakDuration     = 5 * time.Second
)

// Config configures a Client. The zero value of every field means its
// default; New applies them.
type Config struct {
	// BaseURL is the provider's base URL, e.g. "http://provider.test";
	// charges are created at BaseURL+"/v1/charges".
	BaseURL string
	// HTTPClient's Transport is the wire (the harness passes its in-process
	// fault transport); default http.DefaultClient. Only its Transport is
	// used: every try goes through the retry pipeline, not Client.Do.
	HTTPClient *http.Client
	// Now is the clock for attempt creation and the reconciliation loop;
	// default time.Now. The pipeline's timeouts and delays use the runtime
	// clock (virtual inside a testing/synctest bubble).
	Now func() time.Time
	// NewKey generates an idempotency key, once per payment attempt;
	// default a UUIDv7 string (seed article 000: Guid.CreateVersion7).
	NewKey func() string
	// NewID generates a payment attempt id; default uuid.NewV7.
	NewID func() uuid.UUID
	// APIKey, if set, is sent as "Authorization: Bearer <APIKey>". It is
	// never logged and never appears in an error.
	APIKey string

	// AttemptTimeout bounds one HTTP try; default 3s.
	AttemptTimeout time.Duration
	// TotalTimeout bounds the whole pipeline, tries and delays; default 10s.
	TotalTimeout time.Duration
	// RetryDelay is the pause between tries; default 1s. A Retry-After (in
	// seconds) on a 429 or 503 overrides it. No try follows a pause that
	// reaches the end of TotalTimeout.
	RetryDelay time.Duration
	// MaxRetries is how many times a failed try is repeated; default 3 (at
	// most 4 tries). A negative value disables retries.
	MaxRetries int
	// Breaker configures the circuit breaker shared by all calls of a Client.
	Breaker BreakerConfig

	// MinAge is how old an open attempt must be before reconciliation asks
	// the provider about it; default 2m.
	MinAge time.Duration
	// AbandonAfter is how long an open attempt may stay unknown before
	// reconciliation gives it up (when the provider holds no charge for it);
	// default 30m. It must exceed the longest time the provider may still
	// process a late request and stay below the provider's key retention.
	AbandonAfter time.Duration
	// Interval is the period of the reconciliation loop (ReconciliationJob.Run);
	// default 1m.
	Interval time.Duration
	// KeyRetention is how long the provider keeps a key (its profile's
	// retention window); default 24h. StaleKeyMargin is kept below it;
	// default 1h, or a tenth of KeyRetention when that is shorter (a 20 s
	// window keeps 2 s). A checkout never resends the key of an attempt created
	// KeyRetention − StaleKeyMargin ago or earlier: it reconciles the
	// attempt first, and if that cannot settle it, answers PaymentPending
	// (ErrStaleKey) without sending (stalekey.go).
	KeyRetention   time.Duration
	StaleKeyMargin time.Duration

	// WrapTransport, if set, wraps the transport inside the retry pipeline,
	// so it sees every individual HTTP try. Planted-bug mutants use it (for
	// example a middleware that sets a fresh Idempotency-Key on every try).
	WrapTransport func(http.RoundTripper) http.RoundTripper

	// Instance names this client process among several over one store
	// (several API instances behind a load balancer); default "", one
	// instance. A new client of the same Instance fences the earlier one
	// (a restart); clients of other instances write side by side.
	Instance string
	// At, if set, is called at each crash Point of a checkout or
	// reconciliation run, on the goroutine that reaches it, with the call's
	// context; the harness crashes the client from it. Nil in production.
	At func(ctx context.Context, p Point)

	// Planted switches on deliberate bugs; only sut/mutants sets it. The zero
	// value is the reference client.
	Planted Planted
}

// BreakerConfig configures the circuit breaker. It counts transport errors,
// timeouts, 429 and 5xx answers as failures (not 409, 402 or other 4xx).
// The zero value of every field means its default.
type BreakerConfig struct {
	// FailureRatio is the share of failed tries, in [0,1], that opens the
	// breaker; default 0.1.
	FailureRatio float64
	// MinimumThroughput is how many tries must be seen within
	// SamplingDuration before the breaker may open; default 100.
	MinimumThroughput uint
	// SamplingDuration is the rolling window the ratio is measured over;
	// default 30s.
	SamplingDuration time.Duration
	// BreakDuration is how long the breaker stays open before it lets one
	// probe through (half-open); default 5s.
	BreakDuration time.Duration
	// Disabled leaves the breaker out of the pipeline.
	Disabled bool
}

// withDefaults returns cfg with every zero field set to its default.
func (cfg Config) withDefaults() Config {
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = http.DefaultClient
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NewID == nil {
		cfg.NewID = func() uuid.UUID { return uuid.Must(uuid.NewV7()) }
	}
	if cfg.NewKey == nil {
		cfg.NewKey = func() string { return uuid.Must(uuid.NewV7()).String() }
	}
	if cfg.AttemptTimeout <= 0 {
		cfg.AttemptTimeout = DefaultAttemptTimeout
	}
	if cfg.TotalTimeout <= 0 {
		cfg.TotalTimeout = DefaultTotalTimeout
	}
	if cfg.RetryDelay <= 0 {
		cfg.RetryDelay = DefaultRetryDelay
	}
	switch {
	case cfg.MaxRetries == 0:
		cfg.MaxRetries = DefaultMaxRetries
	case cfg.MaxRetries < 0:
		cfg.MaxRetries = 0
	}
	if cfg.MinAge <= 0 {
		cfg.MinAge = DefaultMinAge
	}
	if cfg.AbandonAfter <= 0 {
		cfg.AbandonAfter = DefaultAbandonAfter
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.KeyRetention <= 0 {
		cfg.KeyRetention = DefaultKeyRetention
	}
	if cfg.StaleKeyMargin <= 0 {
		cfg.StaleKeyMargin = min(DefaultStaleKeyMargin, cfg.KeyRetention/10)
	}
	b := &cfg.Breaker
	if b.FailureRatio <= 0 || b.FailureRatio > 1 {
		b.FailureRatio = DefaultFailureRatio
	}
	if b.MinimumThroughput == 0 {
		b.MinimumThroughput = DefaultMinimumThroughput
	}
	if b.SamplingDuration <= 0 {
		b.SamplingDuration = DefaultSamplingDuration
	}
	if b.BreakDuration <= 0 {
		b.BreakDuration = DefaultBreakDuration
	}
	return cfg
}

// transport is the innermost round tripper: the HTTPClient's Transport, or
// http.DefaultTransport.
func (cfg Config) transport() http.RoundTripper {
	if cfg.HTTPClient != nil && cfg.HTTPClient.Transport != nil {
		return cfg.HTTPClient.Transport
	}
	return http.DefaultTransport
}
