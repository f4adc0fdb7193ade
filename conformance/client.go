package conformance

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/checkout"
	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/conformance/internal/machine"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/remote"
	"github.com/idemcheck/idemcheck/sut/service"
)

// Timings are how long a client under test may take, which the harness
// outwaits before it judges liveness: the final phase lets TotalTimeout +
// AbandonAfter + Interval pass, reconciles, lets Interval pass and
// reconciles again. Zero fields take the reference client's defaults
// (10 s, 30 min, 1 min; seed article 000).
type Timings struct {
	// TotalTimeout bounds one checkout call, retries included.
	TotalTimeout time.Duration
	// AbandonAfter is how long reconciliation leaves an attempt open
	// without a charge before it gives the attempt up.
	AbandonAfter time.Duration
	// Interval is the reconciliation job's period.
	Interval time.Duration
}

// ServiceOptions bound a CheckService run's calls to the service.
type ServiceOptions struct {
	// CallTimeout bounds each request to the service, answer included;
	// default service.DefaultCallTimeout (5 s). A service that does not
	// answer a checkout within it fails the run on client-api.
	CallTimeout time.Duration
	// MaxDuration bounds the run's wall-clock time, from CheckService's
	// start; default DefaultServiceDuration (10 min, as a remote run's
	// IDEMCHECK_MAX_DURATION). The search stops once all but 30 % of it is
	// spent — the run is then INCONCLUSIVE, as a remote run on its budget
	// — and a shrink stops at its end, its smallest counterexample marked
	// "not minimal: budget": a hung service costs a CallTimeout per shrink
	// attempt, and rapid's shrink time is only checked between its passes
	// (a pass over one drawn number can make ~100 attempts).
	MaxDuration time.Duration
}

// DefaultServiceDuration is ServiceOptions.MaxDuration's default.
const DefaultServiceDuration = 10 * time.Minute

// Option changes how CheckClient and CheckService run.
type Option func(*options)

// options are CheckClient's and CheckService's.
type options struct {
	timings Timings
	service ServiceOptions
	cfg     Config
	haveCfg bool
	dialect string
}

// WithConfig runs CheckClient or CheckService on cfg instead of FromEnv's
// configuration (the provider, report folder, bounds; Mutant may name a
// provider mutant only, and Instances must be 1).
func WithConfig(cfg Config) Option {
	return func(o *options) { o.cfg, o.haveCfg = cfg, true }
}

// WithTimings tells CheckClient or CheckService the client's own timings
// (see Timings).
func WithTimings(t Timings) Option {
	return func(o *options) { o.timings = t }
}

// WithDialect makes the embedded provider speak dialect to the client
// under test: "reference" (default; docs/provider-api.md) or "stripe",
// Stripe's API as its SDKs call it (provider.Provider.Stripe: form bodies
// on POST /v1/charges, /v1/payment_intents with confirm=true and
// /v1/refunds; retrieve, list and search by
// metadata['merchant_reference']; Stripe's error JSON; opaque bare keys
// of at most 255 characters, Idempotent-Replayed;
// https://docs.stripe.com/api/idempotent_requests,
// https://docs.stripe.com/api/errors). A client built on a provider's SDK
// then runs unchanged, pointed at checkout.Env.BaseURL, HTTPClient and
// APIKey. Its requests are recorded and judged in the dialect (key-format
// takes any key Stripe takes; the report's curl script replays its form
// bodies); the provider-only invariants (replay-consistent,
// mismatch-rejected, equivalent-requests-agree, key-scoped-per-account)
// are NOT JUDGED, as they would judge the harness's own translation
// (idemcheck certify --dialect stripe judges it). The embedded provider
// only: with IDEMCHECK_PROVIDER a URL, WireMock or the Redis store the
// run fails before its first sequence.
func WithDialect(dialect string) Option {
	return func(o *options) { o.dialect = dialect }
}

// WithService sets CheckService's bounds (CheckClient ignores them).
func WithService(s ServiceOptions) Option {
	return func(o *options) { o.service = s }
}

// CheckClient checks the conformance property against the client newClient
// builds (once per drawn sequence, with no orders), as Run does for the
// reference client: the same actions, faults, invariants, reports, replay
// line and curl script. By default the provider is the embedded one on
// virtual time (a testing/synctest bubble), so the client must send
// through checkout.Env.HTTPClient and read time from Env.Now — a client
// with its own http.Client sends past the fault layer and the harness sees
// nothing. The configuration is FromEnv's unless WithConfig gives one:
// IDEMCHECK_PROVIDER=wiremock or a URL runs it in real time as for the
// reference client.
//
// Actions need capabilities: crashes need checkout.Restarter, and
// books-balance, reconciliation-converges and the probes of settled keys
// need checkout.Viewer — for a client without a view the two invariants
// are NOT JUDGED in Stats.Results, never PASS (docs/checkout.md lists what
// each capability feeds). t fails on a violation, a broken contract
// (ClientAPI), a sequence that stalled (a client goroutine blocked outside
// virtual time — a sync.Mutex held across a provider call, a channel, real
// I/O: ClientAPI after 30 s of wall-clock time without progress, naming
// the step), and a run that judged nothing — no safety invariant
// had a single subject (no key, no POST, no order charged) — which is
// never a PASS. An invariant NOT JUDGED or INCONCLUSIVE (held vacuously)
// beside others judged does not fail t, so gate on Stats.Results where
// that matters. It returns the run's statistics, never nil.
func CheckClient(t *testing.T, newClient checkout.New, opts ...Option) *Stats {
	t.Helper()
	if newClient == nil {
		t.Fatal("conformance: CheckClient needs a constructor (checkout.New)")
	}
	return checkUnderTest(t, &machine.UnderTest{New: newClient}, opts)
}

// CheckService checks the conformance property against a checkout service
// in another process, in any language, speaking docs/client-api.md: for
// each drawn sequence, launch starts a fresh service whose provider is the
// embedded reference provider behind the fault proxy on 127.0.0.1, in real
// time (the service's own timeouts should be scaled like Config.TimeScale:
// 1/15 by default, attempt 200 ms, total 667 ms); the harness places
// orders, checks out, reconciles and (if offered) restarts and reads the
// state over HTTP, and judges what crossed the wire to the provider plus
// the service's answers. Every call is bounded (ServiceOptions); a hung,
// crashed or garbage-answering service fails on client-api with a report,
// and a run that judged nothing fails as CheckClient's does. It returns
// the run's statistics, never nil.
func CheckService(t *testing.T, launch service.Launcher, opts ...Option) *Stats {
	t.Helper()
	if launch == nil {
		t.Fatal("conformance: CheckService needs a launcher (service.Launcher)")
	}
	return checkUnderTest(t, &machine.UnderTest{Launch: launch}, opts)
}

// checkUnderTest runs the property against u with opts.
func checkUnderTest(t *testing.T, u *machine.UnderTest, opts []Option) *Stats {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	cfg := o.cfg
	if !o.haveCfg {
		var err error
		if cfg, err = FromEnv(); err != nil {
			t.Fatal(err)
		}
	}
	if cfg.Instances > 1 {
		t.Fatalf("conformance: CheckClient runs one client instance (Instances=%d is the reference client's)", cfg.Instances)
	}
	if why := dialectRefused(o.dialect, cfg); why != "" {
		t.Fatal("conformance: " + why)
	}
	u.TotalTimeout, u.AbandonAfter, u.Interval = o.timings.TotalTimeout, o.timings.AbandonAfter, o.timings.Interval
	u.Dialect = o.dialect
	if u.Launch != nil {
		u.CallTimeout, u.MaxDuration = o.service.CallTimeout, o.service.MaxDuration
		if u.MaxDuration <= 0 {
			u.MaxDuration = DefaultServiceDuration
		}
		u.Deadline = time.Now().Add(u.MaxDuration)
	}
	rc := cfg.settings()
	rc.Instances, rc.Under = 1, u
	stats := cfg.run(t, rc)
	if why := nothingJudged(stats); why != "" && !t.Failed() {
		t.Errorf("conformance: %s", why)
	}
	return stats
}

// dialectRefused says why dialect cannot be served to a client under
// cfg's provider, or "": only the embedded provider (in memory) speaks
// Stripe's API.
func dialectRefused(dialect string, cfg Config) string {
	switch dialect {
	case "", remote.DialectReference:
		return ""
	case remote.DialectStripe:
		if (cfg.Provider != "" && cfg.Provider != ProviderEmbedded) || (cfg.ProviderStore != "" && cfg.ProviderStore != StoreMemory) {
			return fmt.Sprintf("the stripe dialect is served by the embedded provider in memory only, not provider %q with store %q", cfg.Provider, cfg.ProviderStore)
		}
		return ""
	}
	return fmt.Sprintf("unknown dialect %q (want %q or %q)", dialect, remote.DialectReference, remote.DialectStripe)
}

// nothingJudged says why a run that ran its sequences to the end judged
// nothing: every safety invariant held only vacuously or was not judged,
// over no subject at all (no key sent, no POST, no order charged) — a
// client that never reached the provider, or reached it past
// Env.HTTPClient. "" when something was judged, or when the run stopped
// or never ran (its Results say why).
func nothingJudged(s *Stats) string {
	if s.Sequences() == 0 || s.Stopped() != "" {
		return ""
	}
	safety := map[string]bool{}
	for _, inv := range check.Safety() {
		safety[inv.Name] = true
	}
	var why []string
	for _, r := range s.Results() {
		switch {
		case !safety[r.Name]:
		case r.Subjects > 0 || r.Verdict == reports.Fail || r.Verdict == reports.Known:
			return ""
		default:
			why = append(why, fmt.Sprintf("%s %s (%s)", r.Name, r.Verdict, r.Reason))
		}
	}
	return fmt.Sprintf("nothing was judged in %d sequences: the client under test sent nothing a safety invariant speaks of "+
		"(does it send through Env.HTTPClient to Env.BaseURL?): %s", s.Sequences(), strings.Join(why, "; "))
}
