package remote

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Profile is what a provider publishes about its idempotency behaviour, as
// a small JSON file (schema: docs/profiles.md; examples: profiles/). The
// certification checks the provider against the draft and against its own
// profile, and says which for each requirement.
type Profile struct {
	// Name names the provider, e.g. "reference", "stripe-mock".
	Name string `json:"name"`
	// Dialect is "reference" (default) or "stripe".
	Dialect string `json:"dialect,omitempty"`
	// Environment is "sandbox" (default), "test" or "production";
	// "production" is refused before any request.
	Environment string `json:"environment,omitempty"`
	// RetentionWindow is how long the provider remembers a completed key,
	// as a Go duration ("24h"); default 24h.
	RetentionWindow Duration `json:"retention_window,omitempty"`
	// KeyRequired says a create without an Idempotency-Key is refused;
	// default false (the requirement is then INCONCLUSIVE).
	KeyRequired bool `json:"key_required"`
	// ErrorsStored says a declined (402) answer is stored and replayed like
	// a success; default false.
	ErrorsStored bool `json:"errors_stored"`
	// ReplayHeader is the response header marking a replay, if any
	// ("Idempotent-Replayed"); "" for none.
	ReplayHeader string `json:"replay_header,omitempty"`
	// Statuses are the status codes the provider answers, on its own wire,
	// for each idempotency case. The dialect maps them onto docs/provider-api.md's
	// 400 / 422 / 409. Zero means the dialect's default.
	Statuses Statuses `json:"statuses"`
	// Accounts is how many separate accounts the run may use (API keys);
	// the cross-account requirement needs 2. Default 1.
	Accounts int `json:"accounts,omitempty"`
	// KeyForm pins the form the Idempotency-Key is sent in: KeyFormQuoted
	// (a Structured Field String, docs/provider-api.md) or KeyFormBare (the
	// bare token). "" (the default) lets the certification's preflight
	// learn which form the provider accepts; the stripe dialect always
	// sends the bare token.
	KeyForm string `json:"key_form,omitempty"`
	// MaxKeyLength is the longest Idempotency-Key the provider accepts, in
	// characters of the key (inside a Structured Field String's quotes; a
	// bare token's whole value): one longer is refused with 400. 0 (the
	// default) publishes none, and long-key-refused is NOT JUDGED. The
	// reference provider's and Stripe's is 255 (docs/profiles.md).
	MaxKeyLength int `json:"max_key_length,omitempty"`
	// MaxBodyBytes is the largest create body the provider accepts, in
	// bytes; a longer one must be refused with 413 and charge nothing
	// (body-over-limit-refused). 0: none published (that requirement is
	// NOT JUDGED). The reference provider's is provider.MaxBodyBytes
	// (256 KiB).
	MaxBodyBytes int64 `json:"max_body_bytes,omitempty"`
	// SlowTrigger names a test value that makes the sandbox process a
	// create slowly, as Stripe-like sandboxes publish test card tokens
	// and amounts that change processing; nil: none published
	// (slow-request-charged-once is NOT JUDGED).
	SlowTrigger *SlowTrigger `json:"slow_trigger,omitempty"`
	// LookupLag is how long after a charge is made the provider's lookup
	// by merchant reference may still not list it, as a Go duration
	// ("45s"): an eventually consistent lookup, such as Stripe's search
	// ("searchable in under 1 minute" normally, "up to an hour behind
	// during outages": docs.stripe.com/search, "Data freshness"). ""
	// (the default) or "0s": listed at once. At most MaxLookupLag (10
	// min). The property against the URL waits it out, in real time,
	// before each reconciliation that follows a create, so the reference
	// client never reads a lagging empty lookup as final; the
	// certification's requirements wait it out before each lookup by
	// reference that follows a create or refund (docs/profiles.md).
	LookupLag string `json:"lookup_lag,omitempty"`
	// Lookup is how charges are found by merchant reference:
	// "merchant_reference" (reference dialect) or "metadata_search"
	// (stripe dialect). Informational.
	Lookup string `json:"lookup,omitempty"`
	// Lifecycle is what the provider publishes about restarts, its store
	// and its in-flight lease, and the hooks that cause them (Lifecycle).
	Lifecycle Lifecycle `json:"lifecycle"`
}

// SlowTrigger is a profile's slow trigger: a create paid with Source, or
// for Amount (minor units), is processed for at least Duration before it
// is answered. Exactly one of Source and Amount is set.
type SlowTrigger struct {
	// Source is the card token that slows processing ("tok_visa_slow").
	Source string `json:"source,omitempty"`
	// Amount is the amount, in minor units, that slows processing.
	Amount int64 `json:"amount,omitempty"`
	// Duration is how long such a create is processed, a Go duration
	// from MinSlowTrigger (1 s) to MaxSlowTrigger (1 min): the
	// requirement waits it out.
	Duration string `json:"duration"`
}

// The bounds of SlowTrigger.Duration: a requirement waits it out, so it
// is kept short.
const (
	MinSlowTrigger = time.Second
	MaxSlowTrigger = time.Minute
)

// Length is the trigger's duration (0 when it does not parse: a profile
// read by LoadProfile has been checked).
func (s SlowTrigger) Length() time.Duration {
	d, _ := time.ParseDuration(s.Duration)
	return d
}

// check says why s is not a usable slow trigger, or nil.
func (s SlowTrigger) check() error {
	if (s.Source == "") == (s.Amount <= 0) {
		return errors.New("slow_trigger: exactly one of source (a card token) and amount (minor units, positive)")
	}
	d, err := time.ParseDuration(s.Duration)
	if err != nil || d < MinSlowTrigger || d > MaxSlowTrigger {
		return fmt.Errorf("slow_trigger.duration %q: a Go duration from %s to %s", s.Duration, MinSlowTrigger, MaxSlowTrigger)
	}
	return nil
}

// MaxLookupLag is the longest lookup_lag a profile may publish: 10 min,
// a third of the reference client's 30 min abandon horizon, and what a
// run can afford to wait before a reconciliation.
const MaxLookupLag = 10 * time.Minute

// LookupLagDuration is the profile's lookup lag (LookupLag), 0 when none
// is published; check has refused one that does not parse.
func (p Profile) LookupLagDuration() time.Duration {
	d, _ := time.ParseDuration(p.LookupLag)
	return d
}

// checkLookupLag says why lag is not a usable lookup_lag, or nil.
func checkLookupLag(lag string) error {
	if lag == "" {
		return nil
	}
	d, err := time.ParseDuration(lag)
	if err != nil || d < 0 || d > MaxLookupLag {
		return fmt.Errorf("lookup_lag %q: a Go duration from 0s to %s (left out: none)", lag, MaxLookupLag)
	}
	return nil
}

// The bounds of Profile.MaxBodyBytes: room for a create, and a body the
// harness can send.
const (
	MinMaxBodyBytes = 1 << 10
	MaxMaxBodyBytes = 1 << 30
)

// The key forms a profile may pin (Profile.KeyForm) and a run may use
// (Provider.SetKeyForm): draft-ietf-httpapi-idempotency-key-header §2.1
// makes the key a Structured Field String; docs/provider-api.md says
// providers SHOULD also accept the bare token.
const (
	KeyFormQuoted = "quoted"
	KeyFormBare   = "bare"
)

// Statuses are a provider's status codes for the idempotency cases.
type Statuses struct {
	// MissingKey answers a create without a key when keys are required (400).
	MissingKey int `json:"missing_key,omitempty"`
	// Mismatch answers a reused key with another body (422; Stripe: 400).
	Mismatch int `json:"mismatch,omitempty"`
	// InFlight answers a key whose first request is still processing (409).
	InFlight int `json:"in_flight,omitempty"`
}

// Duration is a time.Duration read from and written as a Go duration
// string ("24h", "90s").
type Duration time.Duration

// UnmarshalJSON reads a duration string (the profile's one duration,
// retention_window); it must be at least MinRetentionWindow (1 s): a
// retention window of "0s" (no key remembered at all) is refused rather
// than read as the field left out (the 24 h default), and so is a
// sub-second one ("1ns", "500ms").
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New("a duration must be a string such as \"24h\"")
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return fmt.Errorf("%q is not a non-negative Go duration", s)
	}
	if v == 0 {
		return fmt.Errorf("retention_window %q: a zero duration is refused (a provider that remembers no key is not idempotent); leave the field out for the 24h default", s)
	}
	if v < MinRetentionWindow {
		return fmt.Errorf("retention_window %q: below the minimum of %s (a key forgotten within a second is not kept for a client's retry); leave the field out for the 24h default", s, MinRetentionWindow)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes a duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// Environments a profile may declare.
const (
	EnvSandbox    = "sandbox"
	EnvTest       = "test"
	EnvProduction = "production"
)

// MinRetentionWindow is the shortest retention_window a profile may
// publish: 1 s. A shorter one is refused when the profile is read (exit 2
// from idemcheck certify, nothing sent): no client's retry comes back
// within it.
const MinRetentionWindow = time.Second

// DefaultRetentionWindow is a profile's retention window when it declares
// none: 24 h (docs/provider-api.md).
const DefaultRetentionWindow = 24 * time.Hour

// DraftProfile is what a provider without a profile is judged against:
// the draft alone (draft-ietf-httpapi-idempotency-key-header), none of
// refprovider's own claims — keys not declared required (missing-key is
// PASS when keyless creates are refused, else NOT OFFERED with the
// keyless retry's charges), no maximum key length, errors not declared stored, no replay header, the
// draft's statuses (400 / 422 / 409; the stripe dialect's 400 for a
// mismatch), a 24 h window. Used when IDEMCHECK_PROFILE is unset.
func DraftProfile(dialect string) Profile {
	p := Profile{
		Name: "draft", Dialect: DialectReference, Environment: EnvSandbox,
		RetentionWindow: Duration(DefaultRetentionWindow),
		Statuses:        Statuses{MissingKey: 400, Mismatch: 422, InFlight: 409},
		Accounts:        1, Lookup: "merchant_reference",
	}
	if dialect == DialectStripe {
		p.Dialect, p.Statuses.Mismatch, p.Lookup = DialectStripe, 400, "metadata_search"
	}
	return p
}

// ReferenceProfile is the profile of the reference provider (docs/provider-api.md,
// cmd/refprovider); it matches profiles/reference.json. A URL certified
// without IDEMCHECK_PROFILE is judged against DraftProfile instead.
func ReferenceProfile() Profile {
	return Profile{
		Name: "reference", Dialect: DialectReference, Environment: EnvSandbox,
		RetentionWindow: Duration(DefaultRetentionWindow), KeyRequired: true, ErrorsStored: true,
		ReplayHeader: "Idempotent-Replayed",
		Statuses:     Statuses{MissingKey: 400, Mismatch: 422, InFlight: 409},
		Accounts:     1, Lookup: "merchant_reference", MaxKeyLength: 255,
		MaxBodyBytes: 256 << 10,
		SlowTrigger:  &SlowTrigger{Source: "tok_visa_slow", Duration: "2s"},
	}
}

func (p Profile) withDefaults() (Profile, error) {
	if err := p.check(); err != nil {
		return p, fmt.Errorf("remote: profile %q: %w", p.Name, err)
	}
	if p.Dialect == "" {
		p.Dialect = DialectReference
	}
	if p.Environment == "" {
		p.Environment = EnvSandbox
	}
	if p.RetentionWindow == 0 {
		p.RetentionWindow = Duration(DefaultRetentionWindow)
	}
	if p.Accounts == 0 {
		p.Accounts = 1
	}
	return p, nil
}
