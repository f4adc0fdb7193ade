package machine

import (
	"fmt"
	"strings"

	"github.com/idemcheck/idemcheck/models"
)

// The probe kinds that send a new intent under a key near a used one
// (issue 28): distinct from it, but differing only in letter case, or only
// in its last character (past a 35-character prefix, as two keys of a busy
// UUIDv7 client differ). A key is compared as it is sent (draft §2: the
// value is an opaque String), so the provider must process the new intent
// afresh: the declined test card, so that it answers 402 and charges
// nothing. A provider that folds or truncates keys merges it with the used
// key and answers 422 (another body) or the used key's stored response;
// replay-consistent judges it through the specification (a free key is
// processed). In process only: a sandbox is not sent declines of intents
// no client made.
const (
	nearKeyCase = "a new intent, the key in upper case"
	nearKeyTail = "a new intent, the key's last character changed"
)

// nearKinds are the near-key probe kinds, drawn after probeKinds.
var nearKinds = []string{nearKeyCase, nearKeyTail}

// isNearKind reports whether probe kind k sends a near key.
func isNearKind(k string) bool { return k == nearKeyCase || k == nearKeyTail }

// nearKey is key in kind's near shape, unused in the history so far; ok is
// false when there is none (a key with no letter to change case of).
func (w *World) nearKey(key, kind string) (string, bool) {
	used := map[string]bool{}
	w.recentView(func(h models.Snapshot) {
		for _, e := range h.Exchanges {
			used[e.Key] = true
		}
	})
	if kind == nearKeyCase {
		k := strings.ToUpper(key)
		return k, k != key && !used[k]
	}
	for _, c := range "fedcba9876543210" {
		k := key[:len(key)-1] + string(c)
		if k != key && !used[k] {
			return k, true
		}
	}
	return "", false
}

// nearIntent is the body of the near-key probe's new intent: body (the
// client's, recorded) for another merchant reference, on the declined card.
func nearIntent(body models.ChargeRequest, order int64, n int) models.ChargeRequest {
	body.Source = cards["declined"]
	body.MerchantReference = fmt.Sprintf("probe-near-%d-%d", order, n)
	return body
}
