// Package conformance is idemcheck's library API: property-based
// conformance checks of idempotent payment calls (IETF
// draft-ietf-httpapi-idempotency-key-header; seed articles 000 and 004).
// The entry points (docs/architecture.md maps the packages beneath them):
//
//   - CertifyProvider certifies a payment provider's sandbox at a URL: the
//     fixed requirement list (package certify), then the rapid property
//     with the reference client against it, within budgets; it writes a
//     certification page and returns its verdicts.
//   - CheckClient checks a Go checkout client (package checkout's
//     contract) against the embedded provider under faults, on virtual
//     time.
//   - CheckService checks a checkout service in another process, in any
//     language, speaking docs/client-api.md.
//   - Run is the main job: the reference client against the embedded
//     provider, WireMock or a URL (Config, FromEnv).
//
// All of them run under a *testing.T: rapid draws, checks and shrinks
// through it, and virtual time is a testing/synctest bubble. cmd/idemcheck
// runs CertifyProvider and Run outside go test. A failure is an
// invariant's *ViolationError (errors.Is ErrViolation), reported with its
// shrunk counterexample, report path and replay command.
package conformance

import (
	"errors"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/conformance/internal/run"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// Provider is a provider to certify. Every field is optional but URL; a
// zero field takes the environment's value, and without one its default:
// a field set in Go overrides the environment.
type Provider struct {
	// URL is the provider's base URL, http(s)://host[:port][/path];
	// requests go to URL + "/v1/charges" (a path stays a prefix of every
	// request). Default IDEMCHECK_PROVIDER when that is a URL.
	URL string
	// Dialect is "reference" (docs/provider-api.md) or "stripe"; default
	// IDEMCHECK_DIALECT, else the profile's dialect, else "reference".
	Dialect string
	// Profile is the path of the provider's profile (profiles/*.json,
	// docs/profiles.md: retention window, replay header, environment);
	// default IDEMCHECK_PROFILE, else none: the provider is judged against
	// the IETF draft alone.
	Profile string
	// APIKey is sent as "Authorization: Bearer <key>" and never printed;
	// default the variable APIKeyEnv names. A live-looking key (sk_live_,
	// pk_live_, rk_live_ in any case) is refused before any request.
	APIKey string
	// APIKeyEnv names the environment variable that holds the key; default
	// IDEMCHECK_API_KEY.
	APIKeyEnv string
	// SecondAPIKey is a second account's key, for the cross-account
	// requirement and merchant B's probes (draft §5); default
	// IDEMCHECK_API_KEY_2, else none: key-not-replayed-across-accounts is
	// NOT JUDGED. Refused like APIKey when it looks live.
	SecondAPIKey string
	// Budgets bound what the run may send and how long it may take.
	Budgets Budgets
	// Concurrency is how many of the property's sequences are in flight at
	// once (1 to MaxConcurrency), within the one set of Budgets; default
	// IDEMCHECK_CONCURRENCY, else DefaultConcurrency (4). Each request in
	// flight counts against a sandbox's rate limit: see docs/profiles.md.
	Concurrency int
	// Checks is how many sequences the rapid property draws; default
	// -rapid.checks (RAPID_CHECKS, else rapid's 100).
	Checks int
	// Seed is the rapid property's seed; default -rapid.seed (RAPID_SEED,
	// else a random one, printed with any failure).
	Seed uint64
	// ReportDir is where the run folder and index.md are written; default
	// IDEMCHECK_REPORT_DIR, else DefaultReportDir ("idemcheck-reports" in
	// the current directory).
	ReportDir string
	// Baseline is the path of a baseline file (see Baseline): deviations
	// and requirement ids it lists are KNOWN, not FAIL (the entries that
	// matched nothing are Result.BaselineUnused); default
	// IDEMCHECK_BASELINE, else none.
	Baseline string
	// TimeScale turns the client's timeouts and drawn fault durations into
	// real time; default IDEMCHECK_TIME_SCALE, else DefaultRemoteTimeScale
	// (1/3: attempt timeout 1 s).
	TimeScale float64
	// Progress receives one line per requirement verdict and a running
	// count of sequences with the requests and charges left; default t.Log.
	Progress io.Writer
	// Stop, when closed, ends the run at once (cmd/idemcheck closes it on
	// SIGINT or SIGTERM): requests in flight are ended, what was judged so
	// far is written, INCONCLUSIVE where unfinished, with the reason "the
	// run was interrupted"; default nil (never).
	Stop <-chan struct{}
	// StopCause, when set, names what closed Stop ("SIGINT"), for that
	// reason: "the run was interrupted (SIGINT)"; default nil (unnamed).
	StopCause func() string
	// Hooks are the provider team's lifecycle commands (restart, store
	// down, store up; remote.Hooks), each run as an argv without a shell,
	// bounded by its timeout; a field set here is over IDEMCHECK_HOOK_*,
	// which is over the profile's lifecycle.hooks. None given: the
	// lifecycle requirements are NOT JUDGED (docs/providers.md).
	Hooks remote.Hooks
}

// Budgets bound a certification run: it stops with INCONCLUSIVE verdicts
// rather than exceed one.
type Budgets struct {
	// Requests bounds the HTTP requests sent to the provider; default
	// IDEMCHECK_MAX_REQUESTS, else 20000 (a full run).
	Requests int
	// Charges bounds the create requests (POST /v1/charges), each of which
	// may charge; default IDEMCHECK_MAX_CHARGES, else 10000.
	Charges int
	// Duration bounds the run's wall-clock time; default
	// IDEMCHECK_MAX_DURATION, else 30m.
	Duration time.Duration
}

// Result is a certification run: the page's content (Overall() is its
// verdict: PASS, KNOWN, INCONCLUSIVE or FAIL) and the files written.
type Result struct {
	reports.Certification
	// Paths are the run folder and its certification.md, .json and
	// .junit.xml; empty when the run could not start.
	Paths reports.CertificationPaths
}

// Validate checks p as CertifyProvider would, sending nothing: an error
// wraps remote.ErrLiveCredential for a live-looking key or a production
// profile, and names the setting for any other unusable value.
func (p Provider) Validate() error {
	rc, err := p.remoteConfig()
	if err == nil {
		_, err = rc.Validate()
	}
	return err
}

// CertifyProvider certifies the provider p under t: every requirement of
// certify.Requirements, then the conformance property (Run) with the
// reference client against p, within p.Budgets. It writes the run folder
// under p.ReportDir (certification.md, .json, .junit.xml, run.json),
// updates index.md, appends the page to GITHUB_STEP_SUMMARY when set, and
// returns the result. t fails on a FAIL verdict (Errorf: the call
// returns), on a URL that does not answer in the dialect (certify.ErrDialect,
// or certify.ErrKeyForm when it refuses the key in both forms with 400:
// the page says so, every verdict INCONCLUSIVE; Errorf) and on a refused
// configuration (Fatal, nothing sent); other INCONCLUSIVE verdicts and
// KNOWN ones do not fail t.
func CertifyProvider(t *testing.T, p Provider) Result {
	t.Helper()
	rc, err := p.remoteConfig()
	if err != nil {
		t.Fatal(err)
	}
	cert, paths := run.Certify(t, run.Certification{Remote: rc, Checks: p.Checks, Seed: p.Seed, ReportDir: p.ReportDir,
		Baseline: p.Baseline, TimeScale: p.TimeScale, Progress: p.Progress, Stop: p.Stop, StopCause: p.StopCause,
		Concurrency: p.Concurrency})
	return Result{Certification: cert, Paths: paths}
}

// remoteConfig is remote.FromEnv with p's fields over it.
func (p Provider) remoteConfig() (remote.Config, error) {
	rc, err := remote.FromEnv()
	if err != nil {
		return rc, err
	}
	if p.URL != "" {
		rc.BaseURL = p.URL
	}
	if rc.BaseURL == "" {
		return rc, errors.New("conformance: no provider URL (Provider.URL, or IDEMCHECK_PROVIDER an http(s) URL)")
	}
	if p.Dialect != "" {
		rc.Dialect = p.Dialect
	}
	if p.Profile != "" {
		prof, err := remote.LoadProfile(p.Profile)
		if err != nil {
			return rc, err
		}
		rc.ProfilePath, rc.Profile = p.Profile, prof
	}
	if p.APIKeyEnv != "" {
		rc.APIKey, rc.APIKeyFrom = remote.APIKey(os.Getenv(p.APIKeyEnv)), p.APIKeyEnv
	}
	if p.APIKey != "" {
		rc.APIKey, rc.APIKeyFrom = remote.APIKey(p.APIKey), "Provider.APIKey"
	}
	if p.SecondAPIKey != "" {
		rc.SecondAPIKey, rc.SecondAPIKeyFrom = remote.APIKey(p.SecondAPIKey), "Provider.SecondAPIKey"
	}
	for _, b := range []struct {
		name string
		neg  bool
	}{{"Budgets.Requests", p.Budgets.Requests < 0}, {"Budgets.Charges", p.Budgets.Charges < 0}, {"Budgets.Duration", p.Budgets.Duration < 0}, {"Checks", p.Checks < 0}, {"Concurrency", p.Concurrency < 0}} {
		if b.neg {
			return rc, fmt.Errorf("conformance: Provider.%s is negative (0: the default)", b.name)
		}
	}
	if p.Concurrency > MaxConcurrency {
		return rc, fmt.Errorf("conformance: Provider.Concurrency %d is above MaxConcurrency (%d)", p.Concurrency, MaxConcurrency)
	}
	rc.Hooks = rc.Hooks.Over(p.Hooks)
	if p.Budgets.Requests > 0 {
		rc.Limits.MaxRequests = p.Budgets.Requests
	}
	if p.Budgets.Charges > 0 {
		rc.Limits.MaxCharges = p.Budgets.Charges
	}
	if p.Budgets.Duration > 0 {
		rc.Limits.MaxDuration = p.Budgets.Duration
	}
	shard, err := run.ShardFromEnv()
	if err != nil {
		return rc, err
	}
	rc.Limits = shard.Limits(rc.Limits) // IDEMCHECK_SHARD: this shard's share
	return rc, nil
}

// Run checks the conformance property under t with rapid (rapid's flags
// apply: -rapid.checks, -rapid.seed, -rapid.failfile): the reference
// client against cfg.Provider (CheckClient and CheckService run the same
// property with a client of your own).
// When it fails, the shrunk counterexample is written as a Markdown and a
// JSON report under cfg.ReportDir, and the failure names the report and
// the replay command. When a remote run's budget ran out first, t is
// skipped with an INCONCLUSIVE reason. It returns the run's statistics
// (never nil: a run refused in its subtest before it started returns,
// and its Results say why nothing was judged).
//
// Against WireMock or a URL the property runs as the subtest "wiremock" or
// "url-<hash>" of t (the first 8 hex digits of the SHA-256 of the URL
// without its credentials), and with the provider on Redis as "redis", so
// that rapid's fail files, which every later run of a test replays first,
// stay apart from each provider's. Against a URL it keeps searching after
// a violation: every distinct deviation is reported, each with its own
// counterexample; a deviation cfg.Baseline lists is KNOWN and does not
// fail t. With cfg.Parallel above 1 the embedded provider's property runs
// as the subtests p0, p1, … of that test, at once, with one summary for
// all; cfg.Shard picks its seeds.
func Run(t *testing.T, cfg Config) *Stats {
	t.Helper()
	return cfg.run(t, cfg.settings())
}
