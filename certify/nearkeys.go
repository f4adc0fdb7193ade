package certify

import (
	"fmt"
	"strings"

	"github.com/idemcheck/idemcheck/reports"
)

// ReqNearKeys is the requirement that keys are compared whole and as
// sent (issue 28, near-duplicate keys).
const ReqNearKeys = "near-duplicate-keys-distinct"

// nearKeysRequirement is ReqNearKeys: its place is after long-key-refused
// (keyedges.go).
func nearKeysRequirement() Requirement {
	return Requirement{ID: ReqNearKeys, Level: reports.LevelShould,
		Title:  "Keys are compared whole and as sent: a new payment under a key that differs from a used one only in letter case, or only in its last character after a shared prefix of 63, is another key, processed on its own (201 and its own charge), never refused 409/422 nor answered the used key's charge.",
		Source: "draft-ietf-httpapi-idempotency-key-header §2.1 (the key is a String, unique per request), §2.2 (uniqueness); seed article 004 (the key store); a provider that folds case or cuts keys to a column's width merges two payments' keys (mutant normalised-key)", against: draft,
		cost: cost{3, 3}, check: checkNearKeys}
}

// nearKeyLen is the length of checkNearKeys' keys: 64 characters, past
// the 32 or 36 a key column is often cut at, within every published
// maximum seen (Stripe's 255), or the profile's max_key_length if shorter.
const nearKeyLen = 64

// checkNearKeys: a create under a fresh key K of nearKeyLen characters,
// then new payments (other amounts, other references) under K in upper
// case and under K with its last character changed. Each must be its own
// payment: 201 with a charge other than K's. 409, 422 or K's charge
// FAILs (the keys were merged); anything else is INCONCLUSIVE.
func checkNearKeys(r *runner) (verdict, string, error) {
	n := nearKeyLen
	if max := r.p.Profile().MaxKeyLength; max > 0 && max < n {
		n = max
	}
	base := longKey(n, 0)
	first, why, err := r.created(r.inForm(base), r.charge("near-keys"))
	switch {
	case err != nil:
		return inc, "", err
	case why != "":
		return inc, fmt.Sprintf("a key of %d characters: %s", n, why), nil
	}
	last := byte('x')
	if base[n-1] == last {
		last = 'y'
	}
	var merged []string
	for i, c := range []struct{ key, how string }{
		{strings.ToUpper(base), "only in letter case"},
		{base[:n-1] + string(last), fmt.Sprintf("only in its last character (%d shared)", n-1)},
	} {
		if c.key == base {
			continue // no letter to fold
		}
		body := r.charge(fmt.Sprintf("near-keys-%d", i+1))
		body.Amount += int64(1000 * (i + 1))
		b, err := r.post(r.inForm(c.key), body)
		switch {
		case err != nil:
			return inc, "", err
		case b.status == 409 || b.status == 422 || (first.chargeID() != "" && b.chargeID() == first.chargeID()):
			merged = append(merged, fmt.Sprintf("a new payment under a key differing from a used one %s answered %s", c.how, b.short()))
		case b.err != nil || b.status != 201:
			return inc, fmt.Sprintf("a new payment under a key differing from a used one %s answered %s, not 201", c.how, b.short()), nil
		}
	}
	if len(merged) > 0 {
		return fail, strings.Join(merged, "; ") + " (the used key's 201 " + first.chargeID() + "): the provider normalises keys, so two payments' keys are one", nil
	}
	return pass, "", nil
}
