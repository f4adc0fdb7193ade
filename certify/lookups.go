package certify

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// lookupWith asks GET /v1/charges?merchant_reference=ref through the
// proxy carrying the Idempotency-Key header keyHeader, as an SDK that
// attaches a key to every call does.
func (r *runner) lookupWith(ref, keyHeader string) (answer, error) {
	if err := r.settleLookups(); err != nil {
		return answer{}, err
	}
	return r.sendWith(http.MethodGet, "/v1/charges?merchant_reference="+url.QueryEscape(ref), keyHeader, nil, nil, 0)
}

// ids lists the charges' ids.
func ids(cs []models.Charge) string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return "[" + strings.Join(out, " ") + "]"
}

// checkKeyedLookup: a lookup carrying key K (none found yet), a create
// under another key, then the same lookup carrying K again must list the
// new charge, as the keyless lookup does: a keyed GET is never answered
// from an idempotency cache (a reconciler would see {"data":[]} for a
// charge that exists). A last lookup carrying the create's own key must
// not be answered the create's stored 201 (a cache keyed by the key
// alone, whatever the method). A provider that refuses a keyed lookup (4xx) has
// no cache to judge: INCONCLUSIVE.
func checkKeyedLookup(r *runner) (verdict, string, error) {
	if r.p.Dialect() != remote.DialectReference {
		return nj, notInStripe, nil
	}
	key, body := r.newKeyHeader(), r.charge("keyed-lookup")
	before, err := r.lookupWith(body.MerchantReference, key)
	if err != nil {
		return inc, "", err
	}
	if cs, ok := chargeList(before); !ok || len(cs) != 0 {
		return inc, fmt.Sprintf("the first lookup carrying an Idempotency-Key answered %s, not an empty charge list: nothing to compare the second with", before.short()), nil
	}
	createKey := r.newKeyHeader()
	made, why, err := r.created(createKey, body)
	if err != nil || why != "" {
		return inc, why, err
	}
	after, err := r.lookupWith(body.MerchantReference, key)
	if err != nil {
		return inc, "", err
	}
	plain, err := r.find(body.MerchantReference)
	if err != nil {
		return inc, "", err
	}
	if len(plain) != 1 || plain[0].ID != made.chargeID() {
		return inc, fmt.Sprintf("the keyless lookup found %s, not the charge %s just made: no control to compare the keyed lookup with", ids(plain), made.chargeID()), nil
	}
	cs, ok := chargeList(after)
	switch {
	case after.transient():
		return inc, fmt.Sprintf("the second lookup carrying the key answered %s: transient", after.short()), nil
	case !ok:
		return inc, fmt.Sprintf("the second lookup carrying the key answered %s, not a charge list", after.short()), nil
	case len(cs) != 1 || cs[0].ID != made.chargeID():
		return fail, fmt.Sprintf("a lookup by merchant reference carrying Idempotency-Key %s, sent again after the charge %s was made, listed %s while the keyless lookup lists [%s]: the keyed lookup was answered from an idempotency cache", key, made.chargeID(), ids(cs), made.chargeID()), nil
	}
	same, err := r.lookupWith(body.MerchantReference, createKey)
	if err != nil {
		return inc, "", err
	}
	if _, ok := chargeList(same); !ok && !same.transient() && same.chargeID() == made.chargeID() {
		return fail, fmt.Sprintf("a lookup by merchant reference carrying the create's Idempotency-Key %s answered %s, the create's stored response, not a charge list: the idempotency cache is keyed by the key alone, whatever the method", createKey, same.short()), nil
	}
	return pass, "", nil
}
