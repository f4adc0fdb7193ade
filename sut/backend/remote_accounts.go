package backend

import (
	"net/http"
	"sync"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// remoteAccounts is a remote provider whose profile declares two accounts
// (`accounts: 2`) and whose second API key is given (IDEMCHECK_API_KEY_2):
// the probes as another account reach it as merchant B, through the
// second key's dialect and the same meter, and B's truth is what
// find-by-reference answers B for the references B used. It assumes, as
// the draft's §5 asks, that a lookup lists the asking account's charges
// only: a provider whose lookup is global across accounts shows B's
// charge in A's truth too (at-most-one-charge-per-order then fails).
type remoteAccounts struct {
	*Remote
	asB    func(models.Snapshot, models.Exchange) bool
	second *remote.Provider
	wire2  *Detached

	mu   sync.Mutex                 // guards seen, held
	seen map[string]int             // reference → B's forwarded POSTs at its last query
	held map[string][]models.Charge // reference → B's charges at its last query
}

// WithSecondAccount is rb with merchant B when rb's profile declares two
// accounts and the second key is given; rb itself otherwise. asB tells
// merchant B's requests in a history: the exchanges of the harness's
// probes as another account.
func WithSecondAccount(rb *Remote, asB func(models.Snapshot, models.Exchange) bool) interface {
	Backend
	Quiesce()
} {
	p2, ok := rb.p.Account2()
	if !ok || rb.p.Profile().Accounts < 2 {
		return rb
	}
	a := &remoteAccounts{Remote: rb, asB: asB, second: p2, seen: map[string]int{}, held: map[string][]models.Charge{}}
	a.wire2 = NewDetached(&faults.RemoteWire{Next: p2.Transport(), History: rb.hist, Now: rb.now, MaxBody: p2.Config().Limits.MaxBody}, p2.Wait)
	return a
}

// Wire sends merchant B's probes (Authorization: MerchantB, which the
// second key's dialect replaces) through the second account, and every
// other request as rb does.
func (a *remoteAccounts) Wire() http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.Header.Get("Authorization") != MerchantB {
			return a.Remote.Wire().RoundTrip(req)
		}
		out := req.Clone(req.Context())
		out.Header.Del("Authorization")
		return a.wire2.RoundTrip(out)
	})
}

// Quiesce waits for both accounts' requests still at the provider.
func (a *remoteAccounts) Quiesce() {
	a.Remote.Quiesce()
	a.wire2.Quiesce()
}

// OtherCharges asks the provider, as merchant B, about every reference B
// sent since its last query; the others keep their last answer.
func (a *remoteAccounts) OtherCharges() ([]models.Charge, error) {
	h := a.hist.Snapshot()
	sent := map[string]int{}
	var order []string
	for _, e := range h.Exchanges {
		if !e.IsPost() || !e.Forwarded || e.MerchantReference == "" || !a.asB(h, e) {
			continue
		}
		if sent[e.MerchantReference] == 0 {
			order = append(order, e.MerchantReference)
		}
		sent[e.MerchantReference]++
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var all []models.Charge
	for _, ref := range order {
		if a.seen[ref] != sent[ref] {
			cs, err := find(a.second, ref)
			if err != nil {
				return nil, err
			}
			a.seen[ref], a.held[ref] = sent[ref], cs
		}
		all = append(all, a.held[ref]...)
	}
	return all, nil
}

// Refresh makes the next Charges and OtherCharges read everything again.
func (a *remoteAccounts) Refresh() {
	a.Remote.Refresh()
	a.mu.Lock()
	defer a.mu.Unlock()
	for ref := range a.seen {
		a.seen[ref] = -1
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
