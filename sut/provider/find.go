package provider

import (
	"context"
	"net/http"

	"github.com/idemcheck/idemcheck/models"
)

// find handles GET /v1/charges?merchant_reference=REF: 200 with
// {"data":[...]}, every charge whose merchant_reference is REF, oldest
// first, and {"data":[]} when there is none (docs/provider-api.md). A missing
// or empty merchant_reference gets 400. It lists only the charges of the
// request's own account (AccountScope; draft §5), in memory and over a
// Store (Store.AccountCharges) alike; 503 when a Store's ledger cannot be
// read. With a lookup lag (Config.LookupLag, Config.LookupLagOf) it lists
// only the charges at least that old on the provider's clock.
func (p *Provider) find(w http.ResponseWriter, r *http.Request) {
	ref, ok := reference(w, r)
	if !ok {
		return
	}
	mine, err := p.accountCharges(AccountScope(r))
	if err != nil {
		storeUnavailable(w)
		return
	}
	refOf := func(ch models.Charge) string { return ch.MerchantReference }
	mine = p.settled(r, mine)
	body := mustJSON(models.ChargeList{Data: ofReference(mine, ref, refOf)})
	writeRaw(w, http.StatusOK, p.cachedLookup(r, body)) // planted bug: KeyedLookupCached
}

// settled is the charges of cs that lookup r may list: those at least
// the lookup lag old (Config.LookupLag, or LookupLagOf(r) when larger),
// all of them without a lag. A charge read from a Store has no creation
// time and is always listed.
func (p *Provider) settled(r *http.Request, cs []models.Charge) []models.Charge {
	lag := p.lookupLag
	if p.lookupLagOf != nil {
		lag = max(lag, p.lookupLagOf(r))
	}
	if lag <= 0 {
		return cs
	}
	cut := p.now().Add(-lag)
	out := cs[:0:0]
	for _, ch := range cs {
		if !ch.Created.After(cut) {
			out = append(out, ch)
		}
	}
	return out
}

// accountCharges is the charges account made, in creation order.
func (p *Provider) accountCharges(account string) ([]models.Charge, error) {
	if p.store != nil {
		return p.store.AccountCharges(context.Background(), account)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []models.Charge
	for i, ch := range p.charges {
		if p.accounts[i] == account {
			out = append(out, ch)
		}
	}
	return out, nil
}

// reference is the merchant_reference query parameter of a lookup; ok is
// false, and 400 answered, when it is missing or empty.
func reference(w http.ResponseWriter, r *http.Request) (ref string, ok bool) {
	ref = r.URL.Query().Get("merchant_reference")
	if ref == "" {
		writeProblem(w, http.StatusBadRequest, "the merchant_reference query parameter is required")
	}
	return ref, ref != ""
}

// ofReference is the entries of es whose merchant_reference (refOf) is
// ref, in their order; never nil, so that none is {"data":[]}.
func ofReference[E any](es []E, ref string, refOf func(E) string) []E {
	out := []E{}
	for _, e := range es {
		if refOf(e) == ref {
			out = append(out, e)
		}
	}
	return out
}
