package provider

import (
	"net/http"
	"sync"
	"time"

	"github.com/idemcheck/idemcheck/models"
)

// DefaultRetention is the retention window used when Config.Retention is
// not positive: 24 hours (docs/provider-api.md, "retention window").
const DefaultRetention = 24 * time.Hour

// chargesPath is the one resource of docs/provider-api.md.
const chargesPath = "/v1/charges"

// Config configures a Provider. The zero value is ready to use.
type Config struct {
	// Retention is how long a completed key is remembered, measured from
	// its completion; default 24h (DefaultRetention). A key completed at t
	// still replays at t+Retention and is forgotten after it.
	Retention time.Duration
	// Now is the clock; default time.Now. Inside a testing/synctest bubble
	// time.Now is the bubble's virtual clock.
	Now func() time.Time
	// BeforeCommit, if set, is called after the provider has decided to
	// process a request (key marked in-flight, lock released) and before it
	// creates the charge or decline and stores the result. It is the
	// processing-delay hook: a fault layer sleeps in it to make one request
	// slow. It receives the incoming request and may be called concurrently.
	BeforeCommit func(r *http.Request)
	// KeyOptional makes the Idempotency-Key optional, as many real APIs
	// have it: a POST without one is processed (and may charge) instead of
	// refused with 400. Default false: the key is required (docs/provider-api.md).
	KeyOptional bool
	// MaxKeyLength is the longest Idempotency-Key accepted, in characters
	// of the key (inside a Structured Field String's quotes); a longer one
	// is answered 400 and charges nothing. Default 255
	// (DefaultMaxKeyLength; docs/provider-api.md).
	MaxKeyLength int
	// SlowProcessing is how long a create paid with SlowCard (the slow
	// trigger profiles/reference.json publishes) is processed before it
	// commits, on top of BeforeCommit; default DefaultSlowProcessing (2 s).
	SlowProcessing time.Duration
	// LookupLag makes the lookup eventually consistent: GET
	// /v1/charges?merchant_reference= (and the Stripe dialect's search,
	// which goes through it) lists a charge only once it is at least
	// LookupLag old on the provider's clock (Now), measured from its
	// creation. Retrieve by id, list and the create's own answer are not
	// lagged. Default 0: a charge is listed as soon as it is made.
	// Stripe documents the same for its search endpoints: "searchable in
	// under 1 minute" normally, "up to an hour behind during outages"
	// (docs.stripe.com/search, "Data freshness";
	// docs.stripe.com/api/customers/search). A client must not read an
	// empty lookup as "no charge" before its abandon horizon, which must
	// exceed the lag (docs/provider-api.md, "Lookup lag"). It applies to
	// the in-memory ledger only: a Store does not keep creation times.
	LookupLag time.Duration
	// LookupLagOf, if set, is a lookup's own lag, for a fault layer that
	// gives a provider a lag mid-run (faults.KindLookupLag): a lookup r
	// lags by the larger of LookupLag and LookupLagOf(r).
	LookupLagOf func(r *http.Request) time.Duration
	// Planted switches on deliberate bugs; only sut/mutants sets it. The zero
	// value is the reference provider. It applies to the in-memory store
	// only (a Store plants its own).
	Planted Planted
	// Store, if set, keeps the keys and the charges instead of memory (seed
	// article 004's Redis store: sut/provider/redisstore); Retention is then
	// the Store's own. Nil: in memory, the default.
	Store Store
}

// Provider is the reference provider. It implements http.Handler and is
// safe for concurrent use. Its state lives in memory, or in Config.Store.
type Provider struct {
	retention    time.Duration
	now          func() time.Time
	beforeCommit func(r *http.Request)
	keyOptional  bool
	maxKeyLength int
	slow         time.Duration // SlowCard's processing (Config.SlowProcessing)
	lookupLag    time.Duration // Config.LookupLag
	lookupLagOf  func(r *http.Request) time.Duration
	declines     int     // guarded by mu: declines processed, for their ids
	planted      Planted // deliberate bugs; zero for the reference
	store        Store   // nil: keys and charges in memory

	mu   sync.Mutex         // guards keys, stuckKeys, charges, declines, rf, lookups
	keys map[string]*record // by parsed Idempotency-Key (models.ParseKey)
	// stuckKeys are the keys the KeyStuckAfterError bug left in flight.
	stuckKeys map[string]bool
	charges   []models.Charge   // in creation order; ids are ch_%06d of index+1
	rf        refundBook        // POST/GET /v1/refunds (refund.go)
	lookups   map[string][]byte // planted bug KeyedLookupCached: a keyed lookup's first body
	// accounts[i] is the account (AccountScope) that created charges[i].
	accounts []string
}

// New returns a Provider configured by cfg, with no charges and no keys.
func New(cfg Config) *Provider {
	p := &Provider{
		retention:    cfg.Retention,
		now:          cfg.Now,
		beforeCommit: cfg.BeforeCommit,
		keyOptional:  cfg.KeyOptional,
		maxKeyLength: cfg.MaxKeyLength,
		slow:         cfg.SlowProcessing,
		lookupLag:    cfg.LookupLag,
		lookupLagOf:  cfg.LookupLagOf,
		planted:      cfg.Planted,
		store:        cfg.Store,
		keys:         make(map[string]*record),
		stuckKeys:    make(map[string]bool),
	}
	if p.maxKeyLength <= 0 {
		p.maxKeyLength = DefaultMaxKeyLength
	}
	if p.retention <= 0 {
		p.retention = DefaultRetention
	}
	if p.now == nil {
		p.now = time.Now
	}
	if p.slow <= 0 {
		p.slow = DefaultSlowProcessing
	}
	return p
}

// ServeHTTP routes a request (docs/provider-api.md):
//
//   - POST /v1/charges creates a charge (201), declines it (402) or answers
//     from the key store (replay, 409, 422); bad requests get 400;
//   - GET /v1/charges?merchant_reference=REF lists charges (200, or 400
//     without REF);
//   - another method on /v1/charges gets 405 with Allow: GET, POST;
//   - /v1/refunds creates and lists refunds (refund.go);
//   - any other path gets 404; /v1/charges/ (one trailing slash) is
//     /v1/charges, and the query of a POST is ignored.
//
// Error answers are problem details (application/problem+json). Keys,
// and the charges a GET lists, are scoped per account: the Authorization
// credential (AccountScope; draft §5). Nothing is logged.
func (p *Provider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p.planted.ErrorsNotProblemDetails { // planted bug: ErrorsNotProblemDetails
		w = plainErrors{w}
	}
	if p.hangOnStrayHeader(r) { // planted bug: StrayHeaderHangs
		return
	}
	if resourcePath(r.URL.Path) == models.RefundsPath {
		p.serveRefunds(w, r)
		return
	}
	if resourcePath(r.URL.Path) != chargesPath {
		p.routerError(w, r, http.StatusNotFound, "no such resource: "+r.URL.Path)
		return
	}
	switch r.Method {
	case http.MethodPost:
		p.create(w, r)
	case http.MethodGet:
		p.find(w, r)
	default:
		w.Header().Set("Allow", "GET, POST")
		p.routerError(w, r, http.StatusMethodNotAllowed, r.Method+" is not allowed on "+chargesPath)
	}
}

// Charges returns a copy of every charge the provider holds, in creation
// order: the harness's "provider truth". Over a Store it reads the
// ledger, and is nil when that fails (Store.Charges says why).
func (p *Provider) Charges() []models.Charge {
	if p.store != nil {
		return p.chargesStored()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]models.Charge(nil), p.charges...)
}
