package remote

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
)

// Provider is a remote provider reached through a dialect, with the run's
// safety rails: the key is checked before anything is sent, every request
// passes the budget Meter first, and every merchant reference carries the
// run id. It is safe for concurrent use.
type Provider struct {
	cfg     Config
	base    *url.URL
	dialect Dialect
	meter   *Meter
	next    http.RoundTripper
	key     APIKey

	mu   *sync.Mutex // guards *refs; shared with Account2
	refs *[]string   // this run's merchant references
	// form is the key form creates are sent in (SetKeyForm); shared with
	// Account2.
	form *atomic.Pointer[string]
	// hooks is the property's lifecycle faults so far (hookfaults.go);
	// shared with Account2.
	hooks *hookFaults
}

// New validates cfg (Config.Validate: live keys and production profiles
// are refused here, before any request) and returns the provider. Nothing
// is sent.
func New(cfg Config) (*Provider, error) {
	cfg, err := cfg.Validate()
	if err != nil {
		return nil, err
	}
	d, _ := dialectNamed(cfg.Dialect, cfg.Profile.ReplayHeader, cfg.Limits.MaxBody) // Validate checked the name
	if _, ok := d.(referenceDialect); ok {
		d = referenceDialect{statuses: cfg.Profile.Statuses}
	}
	base, _ := url.Parse(cfg.BaseURL)
	if cfg.RunID == "" {
		cfg.RunID = newRunID()
	}
	reports.RegisterSecret(cfg.APIKey.Reveal(), RedactedKey)
	reports.RegisterSecret(cfg.SecondAPIKey.Reveal(), RedactedKey2)
	m := NewMeter(cfg.Limits)
	p := &Provider{cfg: cfg, base: base, dialect: d, meter: m, next: newWire(cfg, m), key: cfg.APIKey, mu: new(sync.Mutex), refs: new([]string), form: new(atomic.Pointer[string]), hooks: new(hookFaults)}
	p.SetKeyForm(cfg.Profile.KeyForm)
	return p, nil
}

// SetKeyForm sets the form Transport sends every Idempotency-Key in:
// KeyFormBare unquotes a Structured Field String key (models.ParseKey)
// before it leaves; KeyFormQuoted or "" sends the key as the client
// wrote it. New sets the profile's key_form; the certification sets the
// form its preflight learned before the property runs.
func (p *Provider) SetKeyForm(form string) { p.form.Store(&form) }

// KeyForm is the form set by SetKeyForm ("" for as written).
func (p *Provider) KeyForm() string { return *p.form.Load() }

// newRunID is 12 random hex digits: unique enough that two runs never
// share a merchant reference.
func newRunID() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// Account2 is the same provider reached with the second account's key
// (Config.SecondAPIKey), sharing this one's meter and run id; ok is false
// without a second key.
func (p *Provider) Account2() (_ *Provider, ok bool) {
	if p.cfg.SecondAPIKey == "" {
		return nil, false
	}
	q := *p
	q.key = p.cfg.SecondAPIKey
	return &q, true
}

// Config is the validated configuration (the key stays redacted when printed).
func (p *Provider) Config() Config { return p.cfg }

// Profile is the provider's profile.
func (p *Provider) Profile() Profile { return p.cfg.Profile }

// Dialect names the dialect.
func (p *Provider) Dialect() string { return p.dialect.Name() }

// RunID is the id in every merchant reference of this run.
func (p *Provider) RunID() string { return p.cfg.RunID }

// Meter is the run's budget meter.
func (p *Provider) Meter() *Meter { return p.meter }

// BaseURL is the provider's base URL, as configured.
func (p *Provider) BaseURL() string { return p.cfg.BaseURL }

// RequestBase is the base URL a client of Transport puts before the
// docs/provider-api.md paths ("/v1/charges"): BaseURL's scheme and host only.
// Transport (the dialect) puts BaseURL's own path before every request's
// path, so a provider served under a path prefix ("http://host/api") is
// sent "/api/v1/charges", never "/api/api/v1/charges".
func (p *Provider) RequestBase() string {
	return (&url.URL{Scheme: p.base.Scheme, Host: p.base.Host}).String()
}

// Transport is the dialect-translating transport: it takes docs/provider-api.md
// requests (any host; only path and query are used: "/v1/charges", not
// BaseURL's path before it; see RequestBase), waits out a
// Retry-After the provider asked for (Meter.Wait), checks the budget,
// authenticates them and sends them in the provider's dialect to BaseURL,
// and returns docs/provider-api.md answers, read whole (at most Limits.MaxBody
// bytes) with the API keys scrubbed from them (see wire). A request over
// budget, or held by a Retry-After longer than the run has left, is not
// sent: the error wraps ErrBudget. A request still in flight at the
// duration budget's deadline is ended then, with a *BudgetError.
func (p *Provider) Transport() http.RoundTripper { return transport{p} }

type transport struct{ p *Provider }

func (t transport) RoundTrip(req *http.Request) (*http.Response, error) {
	err := t.p.Wait(req.Context())
	if err == nil {
		err = t.p.meter.Take(req.Method)
	}
	if err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	ctx, cancel := t.p.meter.withDeadline(req.Context())
	defer cancel() // the wire has read the whole answer
	return t.p.dialect.Send(t.p.next, t.p.base, t.p.key, t.p.inKeyForm(req.WithContext(ctx)))
}

// inKeyForm is req with its Idempotency-Key in the form SetKeyForm set:
// a quoted key made the bare token under KeyFormBare; req itself
// otherwise.
func (p *Provider) inKeyForm(req *http.Request) *http.Request {
	v := req.Header.Values(models.IdempotencyKeyHeader)
	if p.KeyForm() != KeyFormBare || len(v) != 1 {
		return req
	}
	k, quoted, ok := models.ParseKey(v[0])
	if !ok || !quoted {
		return req
	}
	out := req.Clone(req.Context())
	out.Header.Set(models.IdempotencyKeyHeader, k)
	return out
}

// notSent is a request's error before it left (its client gave up while
// the provider's Retry-After held it): faults.NotSent.
type notSent struct{ error }

func (notSent) NotSent() bool   { return true }
func (e notSent) Unwrap() error { return e.error }

// Wait returns once a Retry-After the provider asked for has passed
// (Meter.Wait): the *HoldError when it outlasts the duration budget, or
// ctx's error when ctx ends first; either way an error that is
// faults.NotSent, since nothing left.
func (p *Provider) Wait(ctx context.Context) error {
	err := p.meter.Wait(ctx)
	if err != nil && !errors.Is(err, ErrBudget) {
		return notSent{err}
	}
	return err
}

// Reference returns a new merchant reference of this run,
// "idemcheck-<run id>-<label>-<n>", and remembers it for Charges.
func (p *Provider) Reference(label string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	ref := fmt.Sprintf("idemcheck-%s-%s-%d", p.cfg.RunID, label, len(*p.refs)+1)
	*p.refs = append(*p.refs, ref)
	return ref
}

// Find asks the provider for the charges with merchant reference ref
// (GET /v1/charges?merchant_reference=, through the dialect and the meter).
func (p *Provider) Find(ctx context.Context, ref string) ([]models.Charge, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://provider/v1/charges?"+url.Values{"merchant_reference": {ref}}.Encode(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := p.Transport().RoundTrip(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, &LookupError{Status: resp.StatusCode, RetryAfter: RetryAfter(resp, time.Now()), Location: resp.Header.Get(RedirectHeader)}
	}
	var list models.ChargeList
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil { // the wire read it whole, within the body cap
		return nil, fmt.Errorf("remote: find by reference: the 200 answer is not a charge list: %v", err)
	}
	return list.Data, nil
}

// LookupError is a find-by-reference answered with a status other than
// 200, with the Retry-After it carried (0 when none) and, for a redirect
// (never followed), where it pointed.
type LookupError struct {
	Status     int
	RetryAfter time.Duration
	Location   string
}

func (e *LookupError) Error() string {
	switch {
	case e.Status >= 300 && e.Status < 400:
		return fmt.Sprintf("remote: find by reference answered %d, a redirect (to %s), not followed", e.Status, reports.RedactURL(e.Location))
	case e.Transient():
		return fmt.Sprintf("remote: find by reference answered %d (transient: the provider is busy or down)", e.Status)
	}
	return fmt.Sprintf("remote: find by reference answered %d", e.Status)
}

// ErrUnavailable is matched (errors.Is) by a *LookupError whose answer is
// transient: the provider's truth could not be read, not a verdict.
var ErrUnavailable = errors.New("remote: the provider answered a transient status")

// Is makes errors.Is(err, ErrUnavailable) hold for a transient answer.
func (e *LookupError) Is(target error) bool { return target == ErrUnavailable && e.Transient() }

// Transient reports whether the answer says "not now" rather than "not
// here": 429 or a 5xx.
func (e *LookupError) Transient() bool {
	return e.Status == http.StatusTooManyRequests || e.Status >= 500
}

// Charges lists this run's charges: Find for every reference Reference
// handed out, in order. Each reference costs one request of the budget.
func (p *Provider) Charges(ctx context.Context) ([]models.Charge, error) {
	p.mu.Lock()
	refs := append([]string(nil), (*p.refs)...)
	p.mu.Unlock()
	var all []models.Charge
	for _, ref := range refs {
		cs, err := p.Find(ctx, ref)
		if err != nil {
			return all, err
		}
		all = append(all, cs...)
	}
	return all, nil
}
