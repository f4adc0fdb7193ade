package certify

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// The requirement ids of key edge cases and keys left blocked (issue 25,
// part A).
const (
	ReqEmptyKey     = "empty-key-refused"
	ReqMalformedKey = "malformed-key-refused"
	ReqLongKey      = "long-key-refused"
	ReqKeyBlocked   = "key-not-blocked-by-unstored-answer"
)

// keyRequirements are the requirements of this file and blocked.go, in
// their order.
func keyRequirements() []Requirement {
	return []Requirement{
		{ID: ReqEmptyKey, Level: reports.LevelMust,
			Title:  "An empty Idempotency-Key (a header with no value, or the empty String \"\") is no key: refused with 400 when keys are required (else processed as keyless), never a key shared by every client (a second customer's other payment under it is not refused 409/422 nor answered the first one's charge).",
			Source: "RFC 9651 §4.2 (a field value that does not parse MUST be ignored); draft-ietf-httpapi-idempotency-key-header §2.1 (the key is a String), §2.7 (400 for a missing key); profile: key_required", against: draft,
			cost: cost{8, 4}, check: checkEmptyKey},
		{ID: ReqMalformedKey, Level: reports.LevelShould,
			Title:  "An Idempotency-Key that is no Structured Field String (\"unterminated; characters outside printable ASCII) is refused with 400 and charges nothing.",
			Source: "draft-ietf-httpapi-idempotency-key-header §2.1, §2.7; RFC 9651 §3.3.3, §4.2; docs/provider-api.md (key edge cases)", against: draft,
			cost: cost{4, 2}, check: checkMalformedKey},
		{ID: ReqLongKey, Level: reports.LevelProfile,
			Title:  "A key of the published maximum length is accepted, and is the whole key (a second one differing only in its last character is another key); one character longer is refused with 400 and charges nothing (never cut, so that two keys differing after the cut are one).",
			Source: "profile: max_key_length; docs/provider-api.md (key edge cases; Stripe publishes 255)", against: profile,
			cost: cost{6, 4}, check: checkLongKey},
		nearKeysRequirement(), // nearkeys.go
		{ID: ReqKeyBlocked, Level: reports.LevelShould,
			Title:  "A key whose request was answered without a stored response (a 404 for an unknown path, a 400 for a body that does not parse or fails validation) is not left in flight: the same key with a valid create is processed, never answered 409 for good.",
			Source: "draft-ietf-httpapi-idempotency-key-header §2.6 (409 only while a request with the key is being processed); docs/provider-api.md (key edge cases)", against: draft,
			cost: cost{3 + 3*maxTriesCost + 3, 3 + 3*maxTriesCost}, check: checkKeyBlocked},
	}
}

// sendRawKey sends one request to path with raw as its JSON body and, on
// a POST, keyHeader as its Idempotency-Key exactly as given, even empty (a
// header with no value); the meter is asked first (posts: 1 for a create).
func (r *runner) sendRawKey(method, path, keyHeader string, raw []byte, posts int) (answer, error) {
	if err := r.afford(1, posts); err != nil {
		return answer{}, err
	}
	ctx, cancel := context.WithTimeout(r.ctx, r.opts.RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, r.proxy.URL+path, strings.NewReader(string(raw)))
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(faults.OpHeader, strconv.Itoa(r.nextOp()))
	if method == http.MethodPost {
		req.Header[models.IdempotencyKeyHeader] = []string{keyHeader}
	}
	return r.do(r.client, req)
}

// postKeyAsIs is a create of body under keyHeader as given (sendRawKey).
func (r *runner) postKeyAsIs(keyHeader string, body models.ChargeRequest) (answer, error) {
	b, _ := json.Marshal(body) // a plain struct
	return r.sendRawKey(http.MethodPost, "/v1/charges", keyHeader, b, 1)
}

// notInDialect is the reason a key edge case is NOT JUDGED in the stripe
// dialect, "" in the reference dialect.
func (r *runner) notInDialect() string {
	if r.p.Dialect() == remote.DialectStripe {
		return "the stripe dialect's keys are opaque strings the adapter passes or drops (an empty one is no header, a quoted one a key of its own): the reference dialect's key syntax is not Stripe's"
	}
	return ""
}

// emptyKeys are the empty Idempotency-Key values checkEmptyKey sends: a
// header with no value, and the empty Structured Field String `""`
// (RFC 9651 §3.3.3), which a server trimming quotes reads as one key too.
func emptyKeys() []struct{ what, header string } {
	return []struct{ what, header string }{
		{"an empty Idempotency-Key header", ""},
		{`the empty String Idempotency-Key: ""`, `""`},
	}
}

// checkEmptyKey: for each empty key (emptyKeys), two customers' different
// payments under it. With keys required each must be 400 and charge
// nothing; with keys optional each may be processed as keyless (a charge
// of its own). Either way the second is never refused as a conflict (409,
// 422) nor answered the first's charge: that is one key shared by every
// client. Every empty key is sent.
func checkEmptyKey(r *runner) (verdict, string, error) {
	if why := r.notInDialect(); why != "" {
		return nj, why, nil
	}
	var failed, seen, unknown []string
	for i, k := range emptyKeys() {
		f, s, u, err := r.emptyKeyCase(i, k.what, k.header)
		if err != nil {
			return inc, "", err
		}
		failed, unknown = append(failed, f...), appendWhy(unknown, u)
		seen = append(seen, s)
	}
	switch {
	case len(failed) > 0:
		return fail, strings.Join(failed, "; "), nil
	case len(unknown) > 0:
		return inc, strings.Join(unknown, "; "), nil
	}
	return pass, "answered " + strings.Join(seen, "; "), nil
}

// emptyKeyCase sends two customers' different creates under header (the
// i-th empty key, what): the failures, the answers seen, and why it showed
// nothing (transient) or "".
func (r *runner) emptyKeyCase(i int, what, header string) (failed []string, seen, unknown string, err error) {
	tag := strconv.Itoa(i + 1)
	a, b := r.charge("empty-key-a"+tag), r.charge("empty-key-b"+tag)
	b.Amount += 1000
	b.Description += " (another customer)"
	first, err := r.postKeyAsIs(header, a)
	if err != nil {
		return nil, "", "", err
	}
	second, err := r.postKeyAsIs(header, b)
	if err != nil {
		return nil, "", "", err
	}
	seen = first.short() + ", then " + second.short()
	switch {
	case first.transient() || second.transient():
		return nil, seen, "two customers' creates under " + what + " answered " + seen + ": transient", nil
	case second.status == 409 || second.status == 422 || (first.chargeID() != "" && second.chargeID() == first.chargeID()):
		return []string{"two customers' different creates, each under " + what + ", answered " + seen + ": the empty value is one key shared by every client"}, seen, "", nil
	}
	if r.p.Profile().KeyRequired {
		for j, x := range []answer{first, second} {
			if x.status != 400 {
				failed = append(failed, fmt.Sprintf("the %s create under %s answered %s, not 400 (keys are required: key_required)", []string{"first", "second"}[j], what, x.short()))
			}
		}
	}
	for _, c := range []struct {
		body models.ChargeRequest
		x    answer
	}{{a, first}, {b, second}} {
		want := 0
		if c.x.status >= 200 && c.x.status <= 299 {
			want = 1
		}
		why, err := r.charges(c.body.MerchantReference, want)
		if err != nil {
			return nil, "", "", err
		}
		failed = appendWhy(failed, why)
	}
	return failed, seen, "", nil
}

// malformedKeys are the Idempotency-Key values checkMalformedKey sends,
// each new: a quoted key without its closing quote, and a quoted key with
// a character outside printable ASCII (é, as UTF-8), neither a Structured
// Field String (RFC 9651 §3.3.3) nor a bare token.
func malformedKeys() []struct{ what, header string } {
	return []struct{ what, header string }{
		{"a quoted key without its closing quote", `"` + newKey() + "-unterminated"},
		{"a quoted key with a character outside printable ASCII", `"` + newKey() + "-cl\u00e9\""},
	}
}

// checkMalformedKey: each malformed key (malformedKeys) under a create of
// its own must be answered 400 and charge nothing; every one is sent.
func checkMalformedKey(r *runner) (verdict, string, error) {
	if why := r.notInDialect(); why != "" {
		return nj, why, nil
	}
	var failed, seen, unknown []string // every key is sent
	for i, k := range malformedKeys() {
		body := r.charge("malformed-key-" + strconv.Itoa(i+1))
		a, err := r.postKeyAsIs(k.header, body)
		if err != nil {
			return inc, "", err
		}
		seen = append(seen, a.short())
		if a.transient() {
			unknown = append(unknown, fmt.Sprintf("%s answered %s: transient", k.what, a.short()))
			continue
		}
		want := 0
		if a.status != 400 {
			failed = append(failed, fmt.Sprintf("%s (%s) answered %s, not 400", k.what, strconv.Quote(k.header), a.short()))
			if a.status >= 200 && a.status <= 299 {
				want = 1
			}
		}
		why, err := r.charges(body.MerchantReference, want)
		if err != nil {
			return inc, "", err
		}
		if why != "" {
			failed = append(failed, k.what+": "+why)
		}
	}
	switch {
	case len(failed) > 0:
		return fail, strings.Join(failed, "; "), nil
	case len(unknown) > 0:
		return inc, strings.Join(unknown, "; "), nil
	}
	return pass, "answered " + strings.Join(seen, ", "), nil
}

// longKey is a new key of exactly n characters (a UUID, then lower-case
// letters and digits), with its last character replaced by last when last
// is not 0.
func longKey(n int, last byte) string {
	k := newKey()
	for len(k) < n {
		k += strings.ReplaceAll(newKey(), "-", "")
	}
	k = k[:n]
	if last != 0 {
		k = k[:n-1] + string(last)
	}
	return k
}

// inForm is key as its Idempotency-Key header in the run's key form.
func (r *runner) inForm(key string) string {
	if r.form == remote.KeyFormBare {
		return key
	}
	return models.FormatKey(key)
}

// checkLongKey judges the profile's max_key_length: a key of exactly that
// many characters is accepted (a 201 of the dialect) and a second one
// differing from it only in its last character, with another amount, is
// not its replay nor refused 409/422 (a key cut below the maximum); a new key one
// character longer is refused with 400 and charges nothing. When the
// longer key is taken, a second key differing from it only in its last
// character, with another amount, shows whether the key was cut (409, 422
// or the first one's charge).
func checkLongKey(r *runner) (verdict, string, error) {
	max := r.p.Profile().MaxKeyLength
	if max <= 0 {
		return nj, fmt.Sprintf("profile %q publishes no maximum key length (max_key_length)", r.p.Profile().Name), nil
	}
	atMax := r.charge("long-key-max")
	maxKey := longKey(max, 'a')
	first, why, err := r.created(r.inForm(maxKey), atMax)
	switch {
	case err != nil:
		return inc, "", err
	case why != "" && refused(first):
		return fail, fmt.Sprintf("a key of exactly the published maximum (max_key_length %d characters) was refused: %s", max, why), nil
	case why != "":
		return inc, fmt.Sprintf("a key of exactly the published maximum (%d characters): %s", max, why), nil
	}
	twin := r.charge("long-key-max-twin")
	twin.Amount += 1000
	b, err := r.post(r.inForm(maxKey[:max-1]+"b"), twin)
	switch {
	case err != nil:
		return inc, "", err
	case b.status == 409 || b.status == 422 || (first.chargeID() != "" && b.chargeID() == first.chargeID()):
		return fail, fmt.Sprintf("a second key of exactly the published maximum (%d characters), differing from the first only in its last character, with another amount, answered %s: the key is cut below the maximum, so two keys are one", max, b.short()), nil
	}
	long := longKey(max+1, 'a')
	over := r.charge("long-key-over")
	a, err := r.post(r.inForm(long), over)
	if err != nil {
		return inc, "", err
	}
	if a.transient() {
		return inc, fmt.Sprintf("a key of %d characters answered %s: transient", max+1, a.short()), nil
	}
	if a.status == 400 {
		why, err := r.charges(over.MerchantReference, 0)
		if err != nil || why != "" {
			return fail, fmt.Sprintf("a key of %d characters answered 400 but %s", max+1, why), err
		}
		return pass, "", nil
	}
	reason := fmt.Sprintf("a key of %d characters, one over the published maximum (max_key_length %d), answered %s, not 400", max+1, max, a.short())
	if a.status >= 200 && a.status <= 299 {
		other := r.charge("long-key-cut")
		other.Amount += 1000
		b, err := r.post(r.inForm(long[:max]+"b"), other)
		if err != nil {
			return inc, "", err
		}
		if b.status == 409 || b.status == 422 || (a.chargeID() != "" && b.chargeID() == a.chargeID()) {
			reason += fmt.Sprintf("; a second key differing from it only in its last character, with another amount, answered %s: the key is cut at %d characters, so two keys are one", b.short(), max)
		}
	}
	return fail, reason, nil
}
