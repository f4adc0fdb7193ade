package backend

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// remoteTimeout bounds each find-by-reference the harness asks a remote
// provider for its truth.
const remoteTimeout = 30 * time.Second

// preflightTries bounds the preflight lookups when the answers are transient.
const preflightTries = 3

// Remote is a provider the harness did not start (a sandbox URL, or
// cmd/refprovider), reached through its dialect and budget meter, in real
// time. Its truth is what find-by-reference answers for the references
// the client used: the harness counts only its own charges.
type Remote struct {
	p    *remote.Provider
	hist *models.History
	now  func() time.Time

	wire *Detached

	mu   sync.Mutex                 // guards seen, held
	seen map[string]int             // reference → forwarded POSTs at its last query
	held map[string][]models.Charge // reference → charges at its last query
	refs []string                   // references in order of first use
}

// NewRemote is the provider p reached through its dialect and meter,
// recording into hist on now's clock.
func NewRemote(p *remote.Provider, hist *models.History, now func() time.Time) *Remote {
	r := &Remote{p: p, hist: hist, now: now, seen: map[string]int{}, held: map[string][]models.Charge{}}
	r.wire = NewDetached(&faults.RemoteWire{Next: p.Transport(), History: hist, Now: now, MaxBody: p.Config().Limits.MaxBody}, p.Wait)
	return r
}

// Provider is the remote provider r reaches (its meter, limits and
// profile).
func (r *Remote) Provider() *remote.Provider { return r.p }

// Wire sends through the dialect and meter and records the provider's
// answer even when the fault layer then loses it, and even when the
// client gave up before it came (see Detached).
func (r *Remote) Wire() http.RoundTripper { return r.wire }

// Quiesce waits until the provider has answered every request that left
// for it, the ones whose client gave up included.
func (r *Remote) Quiesce() { r.wire.Quiesce() }

// Detached carries requests to a provider in another process. A request
// whose client gives up (its attempt timeout, a crash) is not cut: it
// stays on the wire until the provider answers (at most remoteTimeout),
// as a provider goes on processing a request whose client hung up, and
// Quiesce waits for those answers. The run's clock needs that before it
// lets time jump (Clock): the offset clock makes AbandonAfter pass at
// once, and a reconciliation that asked while the provider was still
// charging would abandon the attempt; the charge that lands after it is
// then blamed on the provider (books-balance, or
// at-most-one-charge-per-order once the order is paid again).
type Detached struct {
	next http.RoundTripper
	// hold waits, with the client's context, until the provider's
	// Retry-After has passed (remote.Provider.Wait): a request held back
	// is not yet on its way, so its client may still give it up.
	hold func(context.Context) error
	mu   sync.Mutex // guards out
	out  int        // requests still waiting for the provider's answer
	idle *sync.Cond // signalled when out drops to 0
}

// NewDetached is a Detached wire in front of next; hold waits out the
// provider's Retry-After before a request leaves.
func NewDetached(next http.RoundTripper, hold func(context.Context) error) *Detached {
	d := &Detached{next: next, hold: hold}
	d.idle = sync.NewCond(&d.mu)
	return d
}

// RoundTrip forwards req free of its context's cancellation and returns
// the answer, or the context's error as soon as the client gives up.
func (d *Detached) RoundTrip(req *http.Request) (*http.Response, error) {
	type result struct {
		resp *http.Response
		err  error
	}
	if err := req.Context().Err(); err != nil {
		return nil, err // the client gave up before the request left: it never does
	}
	if err := d.hold(req.Context()); err != nil {
		return nil, err // not sent (faults.NotSent): a Retry-After past the budget, or the client gave up
	}
	done := make(chan result, 1)
	d.mu.Lock()
	d.out++
	d.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(req.Context()), remoteTimeout)
		defer cancel()
		resp, err := d.next.RoundTrip(req.WithContext(ctx)) // RemoteWire has read the body
		done <- result{resp, err}
		d.mu.Lock()
		if d.out--; d.out == 0 {
			d.idle.Broadcast()
		}
		d.mu.Unlock()
	}()
	select {
	case r := <-done:
		return r.resp, r.err
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
}

// Quiesce returns once no request is waiting for the provider's answer.
func (d *Detached) Quiesce() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for d.out > 0 {
		d.idle.Wait()
	}
}

// Clock is the clock of a run against a provider in real time outside
// the bubble (a URL, Redis, a loopback provider): the offset clock, except
// that before time jumps, the provider has answered every request that
// reached it (Quiesce), as it would have in the time that passes.
type Clock struct {
	*faults.OffsetClock
	Quiesce func()
}

// Advance waits for the provider, then lets d pass at once.
func (c Clock) Advance(d time.Duration) {
	c.Quiesce()
	c.OffsetClock.Advance(d)
}

// BaseURL is the client's base: the provider's scheme and host
// (remote.Provider.RequestBase); the wire puts the provider's path prefix
// before every request's path.
func (r *Remote) BaseURL() string { return r.p.RequestBase() }

// Charges asks the provider again about every reference that went over
// the wire (a POST with it, or the client's own find-by-reference) since
// its last query; the others keep their last answer, which spares the
// request budget. The client learns of a charge only through such an
// exchange, so what it claims is always judged on a fresh answer; a charge
// that appears with no exchange (a slow request finishing late) shows at
// the next one, and Refresh, before the final verdict, reads everything.
func (r *Remote) Charges() ([]models.Charge, error) {
	wire := map[string]int{} // reference → exchanges that carried it
	var order []string
	for _, e := range r.hist.Snapshot().Exchanges {
		ref := e.MerchantReference
		if !e.IsPost() {
			q, _ := url.ParseQuery(e.Query)
			ref = q.Get("merchant_reference")
		}
		if ref == "" || !e.Forwarded {
			continue
		}
		if wire[ref] == 0 {
			order = append(order, ref)
		}
		wire[ref]++
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ref := range order {
		n, known := r.seen[ref]
		if !known {
			r.refs = append(r.refs, ref)
		}
		if known && n == wire[ref] {
			continue
		}
		cs, err := r.find(ref)
		if err != nil {
			return nil, err
		}
		r.seen[ref], r.held[ref] = wire[ref], cs
	}
	var all []models.Charge
	for _, ref := range r.refs {
		all = append(all, r.held[ref]...)
	}
	return all, nil
}

// Refresh makes the next Charges ask about every reference again.
func (r *Remote) Refresh() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for ref := range r.seen {
		r.seen[ref] = -1
	}
}

// find is one find-by-reference for the harness's truth: a transient
// answer (429, 5xx) is asked again, up to preflightTries times, after the
// provider's Retry-After (the meter waits it out) or 1 s, then 2 s; one
// still transient is an error matching remote.ErrUnavailable, which stops
// the run INCONCLUSIVE rather than failing it.
func (r *Remote) find(ref string) ([]models.Charge, error) {
	for try := 1; ; try++ {
		cs, err := find(r.p, ref)
		var le *remote.LookupError
		if err == nil || !errors.As(err, &le) || !le.Transient() || try >= preflightTries {
			return cs, err
		}
		if le.RetryAfter == 0 {
			pause(time.Second << (try - 1))
		}
	}
}

// find is p.Find(ref) within remoteTimeout, after a Retry-After the
// provider asked for has passed (that wait is bounded by the duration
// budget, not by remoteTimeout; one past the budget is its *HoldError).
func find(p *remote.Provider, ref string) ([]models.Charge, error) {
	if err := p.Wait(context.Background()); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), remoteTimeout)
	defer cancel()
	return p.Find(ctx, ref)
}

// pause waits d (a back-off between lookups; bounded by the caller).
func pause(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	<-t.C
}

// Exhausted reports whether the run has no room for another step — one
// more create and one more lookup — and why. It first waits out a
// Retry-After the provider asked for, when that ends inside the duration
// budget (nothing is sent to the provider before it expires); one that
// outlasts the budget is the reason.
func (r *Remote) Exhausted() (bool, string) {
	if why := r.p.Meter().Interrupted(); why != "" {
		return true, why
	}
	if err := r.p.Wait(context.Background()); err != nil {
		return true, strings.TrimPrefix(err.Error(), "remote: ")
	}
	if ok, which := r.p.Meter().Afford(2, 1); !ok {
		return true, "the " + which + " budget is spent"
	}
	return false, ""
}

// SearchExhausted reports whether the budget has no room for one more
// step of the search while keeping ShrinkShare of each budget (requests,
// charges, duration) for shrinking, and which budget is short.
func (r *Remote) SearchExhausted() (bool, string) { return SearchExhausted(r.p) }

// SearchExhausted is Remote.SearchExhausted for provider p's budgets.
func SearchExhausted(p *remote.Provider) (bool, string) {
	lim := p.Config().Limits
	keep := func(n int) int { return int(float64(n) * ShrinkShare) }
	if ok, which := p.Meter().Afford(2+keep(lim.MaxRequests), 1+keep(lim.MaxCharges)); !ok {
		return true, which
	}
	if time.Until(p.Meter().Deadline()) < time.Duration(float64(lim.MaxDuration)*ShrinkShare) {
		return true, "duration"
	}
	return false, ""
}

// Preflight asks p about a merchant reference nobody used, before any
// create: an answer that is not a charge list means a wrong URL or dialect,
// which the property would otherwise report as a failure to judge the
// first sequence. A budget too small for it is left to the run to report.
//
// A transient answer (429 or a 5xx) is asked again, up to preflightTries
// times, after its Retry-After (the meter holds the lookup; one past the
// duration budget is left to the run to report) or else 1 s, then 2 s: a
// sandbox that is momentarily rate limited is still the provider. The
// error names the real cause (connection refused, timeout, oversize, a
// redirect, a transient status) before the dialect hint.
func Preflight(p *remote.Provider) error {
	var err error
	for try := 1; ; try++ {
		_, err = find(p, "idemcheck-"+p.RunID()+"-preflight")
		if err == nil || errors.Is(err, remote.ErrBudget) {
			return nil
		}
		var le *remote.LookupError
		if !errors.As(err, &le) || !le.Transient() || try >= preflightTries {
			break
		}
		if le.RetryAfter > 0 {
			continue // the meter holds the next lookup until it has passed, or refuses it (ErrBudget) when the run ends first
		}
		wait := time.Second << (try - 1)
		if time.Until(p.Meter().Deadline()) <= wait {
			return nil // the duration budget ends first: the run stops INCONCLUSIVE on it
		}
		pause(wait)
	}
	if remote.Cause(err) == "connection refused" || strings.Contains(err.Error(), "dial tcp") {
		return fmt.Errorf("idemcheck: provider unreachable at %s: %v; check IDEMCHECK_PROVIDER and that the provider is running; nothing else was sent",
			reports.RedactURL(p.BaseURL()), err)
	}
	return fmt.Errorf("idemcheck: find-by-reference at %s failed: %v; so %s does not answer find-by-reference in the %q dialect, or is not reachable: check IDEMCHECK_PROVIDER and IDEMCHECK_DIALECT; nothing else was sent",
		reports.RedactURL(p.BaseURL()), err, reports.RedactURL(p.BaseURL()), p.Dialect())
}
