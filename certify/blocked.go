package certify

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
)

// unknownPath is a path no provider of the contract serves (404), outside
// /v1/charges so that no route of a real provider (Stripe's
// POST /v1/charges/{id} updates a charge) can take it.
const unknownPath = "/v1/idemcheck-no-such-resource"

// checkKeyBlocked: a create under a new key sent where no handler stores
// an answer — to an unknown path, with a body that does not parse, and
// with valid JSON that fails validation —
// then the same key with a valid create, settled (Options.MaxTries, 409
// retried as an unknown outcome). Nothing is in flight under the key, so
// a 409 that outlasts the tries is the key left blocked (FAIL); a charge
// must be the only one the lookup finds. A final refusal other than 409
// (a stored 404 or 400 replayed, 422) is the provider's stored decision,
// not a blocked key: PASS, saying so.
func checkKeyBlocked(r *runner) (verdict, string, error) {
	if why := r.notInDialect(); why != "" {
		return nj, "the stripe dialect rebuilds every request on its own paths and form bodies: an unknown path or a body that does not parse never reaches the provider", nil
	}
	cases := []struct {
		what, path string
		raw        []byte
	}{
		{"a create sent to an unknown path (" + unknownPath + ")", unknownPath, nil},
		{"a create whose body does not parse", "/v1/charges", []byte(`{"amount": 1099, "currency": "USD", "source": `)},
		{`a create whose JSON fails validation ({"amount":1})`, "/v1/charges", []byte(`{"amount":1}`)},
	}
	var failed, unknown, notes []string // every case is sent; what each showed, in order
	for i, c := range cases {
		key, body := r.newKeyHeader(), r.charge(fmt.Sprintf("key-blocked-%d", i+1))
		raw := c.raw
		if raw == nil {
			raw = mustMarshal(body)
		}
		first, err := r.sendRawKey(http.MethodPost, c.path, key, raw, 1)
		if err != nil {
			return inc, "", err
		}
		if first.status >= 200 && first.status <= 299 {
			unknown = append(unknown, fmt.Sprintf("%s answered %s: a stored answer, not one the key was left without", c.what, first.short()))
			continue
		}
		a, tries, err := r.settle(key, body)
		if err != nil {
			return inc, "", err
		}
		switch {
		case a.status == http.StatusConflict:
			failed = append(failed, fmt.Sprintf("after %s answered %s under a new key, the same key with a valid create answered 409 on all %d tries: the key was left in flight by an answer never stored, and stays blocked", c.what, first.short(), tries))
		case a.unknown():
			unknown = append(unknown, fmt.Sprintf("after %s answered %s, the same key with a valid create answered %s on %d tries: transient", c.what, first.short(), a.short(), tries))
		case a.status >= 200 && a.status <= 299:
			why, err := r.theCharge(body.MerchantReference, a.chargeID())
			if err != nil {
				return inc, "", err
			}
			if why != "" {
				failed = append(failed, fmt.Sprintf("after %s, the same key's valid create answered %s but %s", c.what, a.short(), why))
			}
		default:
			notes = append(notes, fmt.Sprintf("after %s answered %s, the same key's valid create answered %s (the provider kept a decision under the key, not a request in flight)", c.what, first.short(), a.short()))
		}
	}
	switch {
	case len(failed) > 0:
		return fail, strings.Join(failed, "; "), nil
	case len(unknown) > 0:
		return inc, strings.Join(unknown, "; "), nil
	}
	return pass, strings.Join(notes, "; "), nil
}

// mustMarshal is body's JSON; a ChargeRequest always marshals.
func mustMarshal(body models.ChargeRequest) []byte {
	b, _ := json.Marshal(body) // a plain struct
	return b
}

// keylessRetry is missing-key-refused when the profile does not require
// keys: one create without a key and its retry (the same request again,
// as a client retries a timeout), then the lookup by its reference. Each
// charge found past the first is a keyless retry that charged again: NOT
// OFFERED, saying how many times. Both refused with 400 is PASS (the
// provider requires keys although its profile does not say so).
func (r *runner) keylessRetry() (verdict, string, error) {
	prof := r.p.Profile()
	body := r.charge("keyless-retry")
	var seen []string
	refusedBoth := true
	for range 2 {
		a, err := r.post("", body)
		if err != nil {
			return inc, "", err
		}
		if a.transient() {
			return inc, fmt.Sprintf("a create without Idempotency-Key answered %s: transient", a.short()), nil
		}
		seen = append(seen, a.short())
		refusedBoth = refusedBoth && a.status == 400
	}
	cs, err := r.find(body.MerchantReference)
	if err != nil {
		return inc, "", err
	}
	answers := fmt.Sprintf("a create without Idempotency-Key and its retry answered %s, %s; lookup by merchant reference found %d charges", seen[0], seen[1], len(cs))
	switch {
	case refusedBoth && len(cs) == 0:
		return pass, answers + ": keys are required although profile " + strconv.Quote(prof.Name) + " does not say so (key_required: false)", nil
	case len(cs) > 1:
		return reports.NotOffered, fmt.Sprintf("keys are optional (profile %q: key_required false): %s: a keyless retry charged again (%d charges for one payment)", prof.Name, answers, len(cs)), nil
	}
	return reports.NotOffered, fmt.Sprintf("keys are optional (profile %q: key_required false): %s", prof.Name, answers), nil
}
