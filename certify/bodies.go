package certify

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// largeBodyBytes is the size of large-body-fingerprinted-whole's
// creates: 32 KiB, or less when the profile's max_body_bytes is smaller.
// A fingerprint over any prefix shorter than it is caught.
const largeBodyBytes = 32 << 10

// unparsableBody is a create body that does not parse: JSON cut short.
var unparsableBody = []byte(`{"amount":1099,"currency":"USD","source":"tok_visa","merchant_reference":`)

// paddedBody is body as JSON of exactly size bytes where it can be (at
// least its fields), its description first and padded, its amount last:
// two padded bodies that differ only in their amounts differ only in
// their last bytes.
func paddedBody(body models.ChargeRequest, size int) []byte {
	str := func(s string) string { b, _ := json.Marshal(s); return string(b) } // a string cannot fail
	tail := fmt.Sprintf(`","currency":%s,"source":%s,"merchant_reference":%s,"amount":%d}`,
		str(body.Currency), str(body.Source), str(body.MerchantReference), body.Amount)
	desc := strings.TrimSuffix(strings.TrimPrefix(str(body.Description), `"`), `"`)
	head := `{"description":"` + desc + " "
	pad := max(size-len(head)-len(tail), 0)
	return []byte(head + strings.Repeat("x", pad) + tail)
}

// firstDifference is the index of the first byte where a and b differ.
func firstDifference(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// checkUnparsableBody: a body that does not parse, under a key, is
// refused with a 4xx (400 by docs/provider-api.md), not a 5xx, and the
// key stays free: the same key with a good body then answers 201, and
// lookup by reference finds that one charge. Both probes are sent and
// each failure listed.
func checkUnparsableBody(r *runner) (verdict, string, error) {
	if r.p.Dialect() != remote.DialectReference {
		return nj, notInStripe, nil
	}
	key, body := r.newKeyHeader(), r.charge("unparsable-body")
	bad, err := r.sendWith(http.MethodPost, "/v1/charges", key, unparsableBody, nil, 1)
	if err != nil {
		return inc, "", err
	}
	var failed []string
	note := ""
	switch {
	case bad.err != nil:
		note = fmt.Sprintf("the body that does not parse got %s; ", bad.short())
	case bad.status == http.StatusBadRequest:
	case bad.status >= 400 && bad.status < 500 && bad.status != http.StatusConflict && bad.status != http.StatusTooManyRequests:
		note = fmt.Sprintf("the body that does not parse was refused with %d (docs/provider-api.md: 400); ", bad.status)
	default:
		failed = append(failed, fmt.Sprintf("a create whose body does not parse, under a key, answered %s, not 400", bad.short()))
	}
	good, err := r.post(key, body)
	if err != nil {
		return inc, "", err
	}
	switch {
	case good.transient() && len(failed) == 0:
		return inc, fmt.Sprintf("%sthe same key with a good body then answered %s: transient", note, good.short()), nil
	case good.status == http.StatusConflict || good.status == http.StatusUnprocessableEntity:
		failed = append(failed, fmt.Sprintf("the same key with a good body then answered %s: the request that did not parse left the key taken", good.short()))
	case good.err == nil && good.status != http.StatusCreated:
		failed = append(failed, fmt.Sprintf("the same key with a good body then answered %s, not 201", good.short()))
	}
	if good.status == http.StatusCreated {
		why, err := r.theCharge(body.MerchantReference, good.chargeID())
		if err != nil {
			return inc, "", err
		}
		failed = appendWhy(failed, why)
	}
	if len(failed) > 0 {
		return fail, strings.Join(failed, "; "), nil
	}
	return pass, strings.TrimSuffix(note, "; "), nil
}

// largeBodySize is the size of large-body-fingerprinted-whole's creates:
// largeBodyBytes, within the profile's max_body_bytes (less 512 bytes)
// and the harness's own body cap.
func (r *runner) largeBodySize() int {
	n := int64(largeBodyBytes)
	if l := r.p.Profile().MaxBodyBytes; l > 0 && l-512 < n {
		n = l - 512
	}
	return int(min(n, r.bodyCap()-1))
}

// checkLargeBody: a large create (32 KiB, the description padded first,
// the amount last) answers 201; the same key with the same body but for
// its amount, in its last bytes, must be refused as another request
// (422), never answered the first response nor charged again.
func checkLargeBody(r *runner) (verdict, string, error) {
	if r.p.Dialect() != remote.DialectReference {
		return nj, notInStripe, nil
	}
	size := r.largeBodySize()
	key, body := r.newKeyHeader(), r.charge("large-body")
	raw := paddedBody(body, size)
	first, err := r.sendWith(http.MethodPost, "/v1/charges", key, raw, nil, 1)
	if err != nil {
		return inc, "", err
	}
	if first.err != nil || first.status != http.StatusCreated || !first.ofDialect() {
		return inc, fmt.Sprintf("the first create of %d bytes answered %s, not 201 with a charge (a body limit below it? publish max_body_bytes)", len(raw), first.short()), nil
	}
	other := body
	other.Amount++
	raw2 := paddedBody(other, size)
	at := firstDifference(raw, raw2)
	second, err := r.sendWith(http.MethodPost, "/v1/charges", key, raw2, nil, 1)
	if err != nil {
		return inc, "", err
	}
	what := fmt.Sprintf("the same key with a body of %d bytes that differs from the first only from byte %d on (amount %d, not %d)", len(raw2), at, other.Amount, body.Amount)
	var failed []string
	switch {
	case second.transient():
		return inc, fmt.Sprintf("%s answered %s: transient", what, second.short()), nil
	case same(first, second):
		failed = append(failed, fmt.Sprintf("%s was answered the first response %s: the fingerprint does not cover the whole body", what, first.short()))
	case second.status >= 200 && second.status < 300:
		failed = append(failed, fmt.Sprintf("%s was answered %s: processed, not refused as another request", what, second.short()))
	case second.status != http.StatusUnprocessableEntity:
		failed = append(failed, fmt.Sprintf("%s answered %s, not 422 (wire status %d per the profile)", what, second.short(), r.p.Profile().Statuses.Mismatch))
	}
	why, err := r.theCharge(body.MerchantReference, first.chargeID())
	if err != nil {
		return inc, "", err
	}
	if failed = appendWhy(failed, why); len(failed) > 0 {
		return fail, strings.Join(failed, "; "), nil
	}
	return pass, fmt.Sprintf("bodies of %d bytes, differing from byte %d on", len(raw2), at), nil
}

// bodyCap is the most bytes of one body the harness sends or reads
// (remote.Limits.MaxBody; faults.DefaultMaxBody when unset).
func (r *runner) bodyCap() int64 {
	if r.maxBody <= 0 {
		return faults.DefaultMaxBody
	}
	return r.maxBody
}

// checkBodyLimit: with the profile's max_body_bytes L, a create of L+1
// bytes is refused with 413, and lookup by its reference finds nothing.
func checkBodyLimit(r *runner) (verdict, string, error) {
	prof := r.p.Profile()
	switch l := prof.MaxBodyBytes; {
	case l == 0:
		return nj, fmt.Sprintf("profile %q publishes no max_body_bytes", prof.Name), nil
	case r.p.Dialect() != remote.DialectReference:
		return nj, notInStripe, nil
	case l+1 > r.bodyCap():
		return nj, fmt.Sprintf("the profile's max_body_bytes %d is not below the harness's own body cap of %d bytes (IDEMCHECK_MAX_BODY): a longer body cannot be sent", l, r.bodyCap()), nil
	}
	atMax := r.charge("body-limit-max")
	first, err := r.sendWith(http.MethodPost, "/v1/charges", r.newKeyHeader(), paddedBody(atMax, int(prof.MaxBodyBytes)), nil, 1)
	switch {
	case err != nil:
		return inc, "", err
	case first.transient():
		return inc, fmt.Sprintf("a create of exactly max_body_bytes (%d bytes) answered %s: transient", prof.MaxBodyBytes, first.short()), nil
	case first.status < 200 || first.status > 299:
		return fail, fmt.Sprintf("a create of exactly the profile's max_body_bytes (%d bytes) answered %s, not a 2xx: the limit is below the published one", prof.MaxBodyBytes, first.short()), nil
	}
	key, body := r.newKeyHeader(), r.charge("body-limit")
	raw := paddedBody(body, int(prof.MaxBodyBytes)+1)
	a, err := r.sendWith(http.MethodPost, "/v1/charges", key, raw, nil, 1)
	if err != nil {
		return inc, "", err
	}
	why, err := r.charges(body.MerchantReference, 0)
	if err != nil {
		return inc, "", err
	}
	what := fmt.Sprintf("a create of %d bytes, over the profile's max_body_bytes %d,", len(raw), prof.MaxBodyBytes)
	switch {
	case why != "":
		return fail, fmt.Sprintf("%s answered %s, and %s", what, a.short(), why), nil
	case a.transient():
		return inc, fmt.Sprintf("%s answered %s: transient", what, a.short()), nil
	case a.status != http.StatusRequestEntityTooLarge:
		return fail, fmt.Sprintf("%s answered %s, not 413", what, a.short()), nil
	}
	again, tries, err := r.settle(key, body)
	if err != nil {
		return inc, "", err
	}
	if again.status == http.StatusConflict {
		return fail, fmt.Sprintf("%s answered 413, then the same key with a good body answered 409 on all %d tries: the key was left in flight by an answer never stored", what, tries), nil
	}
	return pass, "then the same key with a good body answered " + again.short(), nil
}
