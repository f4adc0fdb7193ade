package provider

import (
	"net/http"

	"github.com/idemcheck/idemcheck/models"
)

// find handles GET /v1/charges?merchant_reference=REF: 200 with
// {"data":[...]}, every charge whose merchant_reference is REF, oldest
// first, and {"data":[]} when there is none (PROVIDER_API.md). A missing
// or empty merchant_reference gets 400. In memory it lists only the
// charges of the request's own account (AccountScope); over a Store, whose
// ledger is not kept per account, every account's.
func (p *Provider) find(w http.ResponseWriter, r *http.Request) {
	ref := r.URL.Query().Get("merchant_reference")
	if ref == "" {
		writeProblem(w, http.StatusBadRequest, "the merchant_reference query parameter is required")
		return
	}
	if p.store != nil {
		p.findStored(w, ref)
		return
	}
	list := models.ChargeList{Data: []models.Charge{}}
	account := AccountScope(r)
	p.mu.Lock()
	for i, ch := range p.charges {
		if ch.MerchantReference == ref && p.accounts[i] == account {
			list.Data = append(list.Data, ch)
		}
	}
	p.mu.Unlock()
	writeRaw(w, http.StatusOK, mustJSON(list))
}
