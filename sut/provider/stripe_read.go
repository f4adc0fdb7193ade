package provider

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/stripewire"
)

// The paging of a Stripe list: limit 1 to 100, default 10
// (https://docs.stripe.com/api/pagination).
const (
	stripeDefaultLimit = 10
	stripeMaxLimit     = 100
)

// get serves the Stripe dialect's reads, each over the asking account's
// entries only (AccountScope): retrieve by id, list (newest first,
// limit), and search of charges and PaymentIntents by metadata (oldest
// first, as the reference provider's lookup lists them). A PaymentIntent
// is read as the charge it made (stripewire.IntentOf).
func (s stripeAPI) get(w http.ResponseWriter, r *http.Request, path string) {
	chargeID := func(c models.Charge) string { return c.ID }
	intentID := func(c models.Charge) string { return stripewire.IntentID(c.ID) }
	switch {
	case path == chargesPath+"/search":
		search(s.p, w, r, path, stripewire.ChargeOf)
	case path == intentsPath+"/search":
		search(s.p, w, r, path, stripewire.IntentOf)
	case path == chargesPath:
		cs, err := s.p.accountCharges(AccountScope(r))
		listed(w, r, path, cs, err, stripewire.ChargeOf)
	case path == intentsPath:
		cs, err := s.p.accountCharges(AccountScope(r))
		listed(w, r, path, cs, err, stripewire.IntentOf)
	case path == models.RefundsPath:
		rs, err := s.p.accountRefunds(AccountScope(r))
		listed(w, r, path, rs, err, stripewire.RefundOf)
	case strings.HasPrefix(path, chargesPath+"/"):
		cs, err := s.p.accountCharges(AccountScope(r))
		retrieved(w, strings.TrimPrefix(path, chargesPath+"/"), cs, err, chargeID, stripewire.ChargeOf)
	case strings.HasPrefix(path, intentsPath+"/"):
		cs, err := s.p.accountCharges(AccountScope(r))
		retrieved(w, strings.TrimPrefix(path, intentsPath+"/"), cs, err, intentID, stripewire.IntentOf)
	case strings.HasPrefix(path, models.RefundsPath+"/"):
		rs, err := s.p.accountRefunds(AccountScope(r))
		retrieved(w, strings.TrimPrefix(path, models.RefundsPath+"/"), rs, err, func(re models.Refund) string { return re.ID }, stripewire.RefundOf)
	default:
		writeStripe(w, http.StatusNotFound, stripewire.TypeInvalidRequest, "", "Unrecognized request URL (GET: "+r.URL.Path+").")
	}
}

// search serves GET /v1/charges/search (and /v1/payment_intents/search)
// ?query=metadata['merchant_reference']:'REF' through the reference
// provider's lookup (GET /v1/charges?merchant_reference=REF), so that a
// planted bug in the lookup shows here too; of renders each charge. Any
// other query is 400.
func search[T any](p *Provider, w http.ResponseWriter, r *http.Request, path string, of func(models.Charge) T) {
	limit, ok := stripeLimit(w, r.URL.Query(), "query")
	if !ok {
		return
	}
	ref, ok := stripewire.SearchReference(r.URL.Query().Get("query"))
	if !ok {
		writeStripe(w, http.StatusBadRequest, stripewire.TypeInvalidRequest, "parameter_invalid",
			"This provider searches charges by metadata['"+stripewire.ReferenceField+"']:'REF' only.")
		return
	}
	in, err := http.NewRequestWithContext(r.Context(), http.MethodGet, chargesPath+"?"+url.Values{"merchant_reference": {ref}}.Encode(), nil)
	if err != nil {
		writeStripe(w, http.StatusBadRequest, stripewire.TypeInvalidRequest, "", err.Error())
		return
	}
	if a := r.Header.Values("Authorization"); len(a) > 0 {
		in.Header["Authorization"] = a
	}
	rec := httptest.NewRecorder()
	p.ServeHTTP(rec, in)
	var list models.ChargeList
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &list) != nil {
		translate(w, rec, kindCharge)
		return
	}
	out := stripewire.List[T]{Object: "search_result", URL: path, Data: []T{}}
	for i, c := range list.Data {
		if i == limit {
			out.HasMore = true
			break
		}
		out.Data = append(out.Data, of(c))
	}
	writeJSON(w, http.StatusOK, out)
}

// listed answers a Stripe list of es (oldest first as kept), newest
// first, at most the request's limit; 503 when the store cannot be read.
func listed[E, S any](w http.ResponseWriter, r *http.Request, path string, es []E, err error, of func(E) S) {
	limit, ok := stripeLimit(w, r.URL.Query())
	if !ok {
		return
	}
	if err != nil {
		writeStripe(w, http.StatusServiceUnavailable, stripewire.TypeAPI, "", "the ledger could not be read")
		return
	}
	out := stripewire.List[S]{Object: "list", URL: path, Data: []S{}}
	for _, e := range slices.Backward(es) {
		if len(out.Data) == limit {
			out.HasMore = true
			break
		}
		out.Data = append(out.Data, of(e))
	}
	writeJSON(w, http.StatusOK, out)
}

// retrieved answers the entry of es whose id (idOf) is id, or 404
// resource_missing.
func retrieved[E, S any](w http.ResponseWriter, id string, es []E, err error, idOf func(E) string, of func(E) S) {
	if err != nil {
		writeStripe(w, http.StatusServiceUnavailable, stripewire.TypeAPI, "", "the ledger could not be read")
		return
	}
	for _, e := range es {
		if idOf(e) == id {
			writeJSON(w, http.StatusOK, of(e))
			return
		}
	}
	writeStripe(w, http.StatusNotFound, stripewire.TypeInvalidRequest, "resource_missing", "No such object: '"+id+"'")
}

// stripeLimit is the query's limit (1 to 100, default 10); any parameter
// but limit and the names in also is 400 parameter_unknown.
func stripeLimit(w http.ResponseWriter, q url.Values, also ...string) (int, bool) {
	for name := range q {
		if name != "limit" && !slices.Contains(also, name) {
			writeStripe(w, http.StatusBadRequest, stripewire.TypeInvalidRequest, "parameter_unknown", "Received unknown parameter: "+name)
			return 0, false
		}
	}
	v := q.Get("limit")
	if v == "" {
		return stripeDefaultLimit, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > stripeMaxLimit {
		writeStripe(w, http.StatusBadRequest, stripewire.TypeInvalidRequest, "parameter_invalid_integer", "limit must be an integer from 1 to 100")
		return 0, false
	}
	return n, true
}
