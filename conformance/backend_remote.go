package conformance

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
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

// remoteBackend is a provider the harness did not start (a sandbox URL, or
// cmd/refprovider), reached through its dialect and budget meter, in real
// time. Its truth is what find-by-reference answers for the references
// the client used: the harness counts only its own charges.
type remoteBackend struct {
	p    *remote.Provider
	hist *models.History
	now  func() time.Time

	mu   sync.Mutex                 // guards seen, held
	seen map[string]int             // reference → forwarded POSTs at its last query
	held map[string][]models.Charge // reference → charges at its last query
	refs []string                   // references in order of first use
}

func newRemoteBackend(p *remote.Provider, hist *models.History, now func() time.Time) *remoteBackend {
	return &remoteBackend{p: p, hist: hist, now: now, seen: map[string]int{}, held: map[string][]models.Charge{}}
}

// Wire sends through the dialect and meter and records the provider's
// answer even when the fault layer then loses it.
func (r *remoteBackend) Wire() http.RoundTripper {
	return &faults.RemoteWire{Next: r.p.Transport(), History: r.hist, Now: r.now}
}

func (r *remoteBackend) BaseURL() string { return r.p.BaseURL() }

// Charges asks the provider again about every reference that went over
// the wire (a POST with it, or the client's own find-by-reference) since
// its last query; the others keep their last answer, which spares the
// request budget. The client learns of a charge only through such an
// exchange, so what it claims is always judged on a fresh answer; a charge
// that appears with no exchange (a slow request finishing late) shows at
// the next one, and Refresh, before the final verdict, reads everything.
func (r *remoteBackend) Charges() ([]models.Charge, error) {
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
		ctx, cancel := context.WithTimeout(context.Background(), remoteTimeout)
		cs, err := r.p.Find(ctx, ref)
		cancel()
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
func (r *remoteBackend) Refresh() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for ref := range r.seen {
		r.seen[ref] = -1
	}
}

// Exhausted reports whether the run's budget has no room for one more
// create and one more lookup, and which budget is short.
func (r *remoteBackend) Exhausted() (bool, string) {
	ok, which := r.p.Meter().Afford(2, 1)
	return !ok, which
}

// preflight asks p about a merchant reference nobody used, before any
// create: an answer that is not a charge list means a wrong URL or dialect,
// which the property would otherwise report as a failure to judge the
// first sequence. A budget too small for it is left to the run to report.
func preflight(p *remote.Provider) error {
	ctx, cancel := context.WithTimeout(context.Background(), remoteTimeout)
	defer cancel()
	_, err := p.Find(ctx, "idemcheck-"+p.RunID()+"-preflight")
	if err == nil || errors.Is(err, remote.ErrBudget) {
		return nil
	}
	return fmt.Errorf("idemcheck: %s does not answer find-by-reference in the %q dialect (%v); check IDEMCHECK_PROVIDER and IDEMCHECK_DIALECT; nothing else was sent", reports.RedactURL(p.BaseURL()), p.Dialect(), err)
}
