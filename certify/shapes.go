package certify

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// ReqShapes is the requirement that one logical request sent in the shapes
// a client library or a proxy may produce is one request under its key.
const ReqShapes = "equivalent-request-shapes-agree"

// requestShape is one way to send a create's request: a path suffix (a
// trailing slash, an unrelated query parameter) and the body's bytes.
type requestShape struct {
	name, suffix string
	raw          []byte
}

// requestShapes are the shapes of body checkShapes sends after the first
// create: the same fields and values, other bytes or another URL.
func requestShapes(body models.ChargeRequest) []requestShape {
	plain, _ := json.Marshal(body) // a plain struct
	var fields map[string]any
	_ = json.Unmarshal(plain, &fields)
	sorted, _ := json.Marshal(fields) // encoding/json sorts map keys: another order than the struct's
	spaced, _ := json.MarshalIndent(body, "  ", "\t")
	return []requestShape{
		{name: "a trailing slash", suffix: "/", raw: plain},
		{name: "an unrelated query parameter", suffix: "?utm_source=idemcheck", raw: plain},
		{name: "the fields in another order", raw: sorted},
		{name: "other whitespace", raw: append(append([]byte("\n "), spaced...), "\r\n"...)},
	}
}

// checkShapes: after a first create, the same request under the same key
// with a trailing slash, an unrelated query parameter, its JSON fields in
// another order and other whitespace is answered the first response or
// refused (404, 400…), never charged again and never refused with the
// mismatch status (the fingerprint is over the payload's content, draft
// §2.4); the lookup by merchant reference then finds one charge. Every
// shape is sent, and the FAIL names each that failed, in order. The
// first create is the control: unless it answered 201 with a charge and
// the lookup then finds exactly that one, the shapes would show nothing
// (a provider that declines, fails or answers 201 without charging), and
// the requirement is INCONCLUSIVE with the reason, never PASS.
func checkShapes(r *runner) (verdict, string, error) {
	if r.p.Dialect() == remote.DialectStripe {
		return nj, "the stripe dialect rebuilds every create (form-encoded, on its own URL): the shapes never reach the provider", nil
	}
	key, body := r.newKeyHeader(), r.charge("shapes")
	first, why, err := r.created(key, body)
	if err != nil || why != "" {
		return inc, why, err
	}
	if why, err := r.charges(body.MerchantReference, 1); err != nil || why != "" {
		if why != "" {
			why = fmt.Sprintf("the first create answered %s but %s: the control request produced no charge of its own, so no shape can show a second one", first.short(), why)
		}
		return inc, why, err
	}
	var failed []string // each failing shape, in the order sent: every shape is sent
	for _, s := range requestShapes(body) {
		if err := r.afford(1, 1); err != nil {
			return inc, "", err
		}
		a, err := r.sendBytes(r.client, http.MethodPost, r.proxy.URL+"/v1/charges"+s.suffix, key, s.raw)
		if err != nil {
			return inc, "", err
		}
		switch {
		case a.err != nil:
			continue // an unknown outcome: the lookup below tells whether it charged
		case a.status == http.StatusUnprocessableEntity:
			failed = append(failed, fmt.Sprintf("with %s it was refused with 422 as another body", s.name))
		case a.status >= 200 && a.status < 300 && !same(first, a):
			failed = append(failed, fmt.Sprintf("with %s it was answered %s, not the replay", s.name, a.short()))
		}
	}
	why, err = r.charges(body.MerchantReference, 1)
	if err != nil {
		return inc, "", err
	}
	if why != "" {
		failed = append(failed, fmt.Sprintf("after the same request in %d other shapes, %s", len(requestShapes(body)), why))
	}
	if len(failed) > 0 {
		return fail, fmt.Sprintf("the same request under the first create's key (first answered %s): %s", first.short(), strings.Join(failed, "; ")), nil
	}
	return pass, "", nil
}
