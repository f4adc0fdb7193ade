package check

import (
	"sort"

	"github.com/idemcheck/idemcheck/models"
)

// checkKeyScopedPerAccount: a key is scoped per account (draft-ietf-
// httpapi-idempotency-key-header §5: the cache key is a composite of the
// client's key and client-specific attributes). Merchant B sending a key
// merchant A used (the probe of kind ProbeOtherAccount) never receives A's
// stored response (its body or one of A's charges), is never blocked by it
// (409 or 422 on B's first use of the key), and a charge made for B is
// B's alone: in B's ledger, not A's, at most one per B key, and every
// charge in B's ledger was answered to B. B's probes are left out of
// postsOf, so no other invariant counts them as merchant A's.
func checkKeyScopedPerAccount(w World) Finding {
	n := newNames(w)
	ofA := map[string]bool{}      // digests and charge ids merchant A was answered, by key
	aCharges := map[string]bool{} // merchant A's ledger
	bCharges := map[string]bool{} // merchant B's ledger
	bKeys := map[string]string{}  // charge id answered to B -> B's key
	bSeen := map[string]bool{}    // keys B sent that reached the provider
	for _, c := range w.Charges {
		aCharges[c.ID] = true
	}
	for _, c := range w.OtherCharges {
		bCharges[c.ID] = true
	}
	pending := false // a request of B's still at the provider: its charge may be in the ledger already
	for _, e := range w.History.Exchanges {
		if e.IsPost() && e.Forwarded && !e.ProviderDone && asOtherAccount(w.History, e) {
			pending, bSeen[e.Key] = true, true
		}
		if !e.IsPost() || !e.ProviderDone {
			continue
		}
		if !asOtherAccount(w.History, e) {
			ofA[e.Key+" "+e.ProviderBodyDigest] = true
			if e.ProviderChargeID != "" {
				ofA[e.Key+" "+e.ProviderChargeID] = true
			}
			continue
		}
		ref := e.MerchantReference // named only in a violation
		switch {
		case refusedStoreDown(e):
		case ofA[e.Key+" "+e.ProviderBodyDigest] && !anonymousDecline(e) && !refusal(e), e.ProviderChargeID != "" && (ofA[e.Key+" "+e.ProviderChargeID] || aCharges[e.ProviderChargeID]):
			return Violation(KeyScopedPerAccount, "%s: another account sending this intent's key was answered %s, the first account's stored response", n.of(ref), answer(e))
		case (e.ProviderStatus == 409 || e.ProviderStatus == 422) && !bSeen[e.Key]:
			return Violation(KeyScopedPerAccount, "%s: another account sending this intent's key for the first time was refused with %d: one account's key blocked another's", n.of(ref), e.ProviderStatus)
		case e.ProviderChargeID != "" && e.ProviderStatus >= 200 && e.ProviderStatus < 300:
			if !bCharges[e.ProviderChargeID] {
				return Violation(KeyScopedPerAccount, "%s: another account was answered %s, a charge its own ledger does not hold", n.of(ref), answer(e))
			}
			if k, ok := bKeys[e.ProviderChargeID]; ok && k != e.Key {
				return Violation(KeyScopedPerAccount, "%s: another account was answered %s under two keys", n.of(ref), answer(e))
			}
			bKeys[e.ProviderChargeID] = e.Key
		}
		bSeen[e.Key] = true
	}
	perKey := map[string]int{}
	ids := make([]string, 0, len(bCharges))
	for id := range bCharges {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		k, ok := bKeys[id]
		if !ok && pending {
			continue
		}
		if !ok {
			return Violation(KeyScopedPerAccount, "the second account's ledger holds %s, which no answer to it named", id)
		}
		if perKey[k]++; perKey[k] > 1 {
			return Violation(KeyScopedPerAccount, "the second account's ledger holds %d charges for one of its keys", perKey[k])
		}
	}
	return Finding{}
}

// anonymousDecline reports whether e's answer is a decline that names no
// charge: the reference's decline body carries no id, so merchant B's own
// decline is byte-identical to merchant A's stored one, and only the
// side effect tells them apart (checkDeclinesRunOnce).
func anonymousDecline(e models.Exchange) bool {
	return e.ProviderStatus == 402 && e.ProviderChargeID == ""
}

// refusal reports whether e was answered 409 or 422: a problem body alike
// for every account, so not "A's stored response" by its bytes. On B's
// first use of the key it is the blocked-key case; after that, B's own
// request under the key may still be in flight (the 20 000-sequence run,
// seed 20261201: B's timed-out probe, then B's 409, was taken for A's).
func refusal(e models.Exchange) bool { return e.ProviderStatus == 409 || e.ProviderStatus == 422 }
