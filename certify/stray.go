package certify

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/idemcheck/idemcheck/sut/remote"
)

// strayHeaders are the client-settable headers outside the contract that
// stray-headers-ignored sends on one create: a tracing id many layers
// read, a proxy's forwarding header, and the replay mark, a response
// header, sent on a request (a layer might trust it).
func strayHeaders(n int) http.Header {
	return http.Header{
		"X-Request-Id":        {fmt.Sprintf("idemcheck-stray-%d", n)},
		"X-Forwarded-For":     {"203.0.113.7"}, // TEST-NET-3 (RFC 5737)
		"Idempotent-Replayed": {"true"},
	}
}

// checkStrayHeaders: a create carrying strayHeaders must be answered, in
// the request timeout, 201 with a charge; the same request under its key
// without them must be its replay; lookup by reference finds one charge.
// A hang (no answer in the request timeout) is FAIL, with how the same
// request without the headers was answered.
func checkStrayHeaders(r *runner) (verdict, string, error) {
	if r.p.Dialect() != remote.DialectReference {
		return nj, notInStripe, nil
	}
	key, body := r.newKeyHeader(), r.charge("stray-headers")
	raw, _ := json.Marshal(body) // a plain struct
	stray := strayHeaders(r.nextOp())
	what := "a create carrying " + strings.Join(slices.Sorted(maps.Keys(stray)), ", ")
	a, err := r.sendWith(http.MethodPost, "/v1/charges", key, raw, stray, 1)
	if err != nil {
		return inc, "", err
	}
	plain, err := r.post(key, body)
	if err != nil {
		return inc, "", err
	}
	var failed []string
	switch {
	case a.err != nil:
		failed = append(failed, fmt.Sprintf("%s got %s within %s; the same request without them then answered %s", what, a.short(), r.opts.RequestTimeout, plain.short()))
	case a.transient():
		return inc, fmt.Sprintf("%s answered %s: transient", what, a.short()), nil
	case a.status != http.StatusCreated || !a.ofDialect():
		failed = append(failed, fmt.Sprintf("%s answered %s, not 201 with a charge; the same request without them then answered %s", what, a.short(), plain.short()))
	case !same(a, plain):
		failed = append(failed, fmt.Sprintf("%s answered %s; the same request under its key without them answered %s, not that response", what, a.short(), plain.short()))
	}
	id := a.chargeID()
	if id == "" {
		id = plain.chargeID()
	}
	why, err := r.theCharge(body.MerchantReference, id)
	if err != nil {
		return inc, "", err
	}
	if failed = appendWhy(failed, why); len(failed) > 0 {
		return fail, strings.Join(failed, "; "), nil
	}
	return pass, "", nil
}
