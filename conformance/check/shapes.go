package check

import "github.com/idemcheck/idemcheck/models"

// checkEquivalentRequests: a probe that sends a key's request in another
// shape (a trailing slash, an unrelated query parameter, the JSON fields
// in another order, other whitespace; probe_shapes.go) is the same request
// under that key: the provider answers the key's first response or refuses
// it (400, 404, 405, 409…), and never charges again; and since its body has
// the same fields and values, it is never refused as another body with 422
// (draft-ietf-httpapi-idempotency-key-header §2.4: the fingerprint is over
// the payload's content; §2.6). Shape probes are left out of postsOf, so
// no other provider invariant judges them.
func checkEquivalentRequests(w World) Finding {
	n := newNames(w)
	var found Finding
	eachJudgedShape(w, func(e, f models.Exchange, kind string) bool {
		ref := e.MerchantReference // named only in a violation
		switch {
		case e.ProviderStatus == 422:
			found = Violation(EquivalentRequestsAgree, "%s: the same request with %s was refused with 422 as another body (the first answer was %s)", n.of(ref), shapeWords(kind), answer(f))
		case e.ProviderStatus >= 200 && e.ProviderStatus < 300 && e.ProviderBodyDigest != f.ProviderBodyDigest,
			e.ProviderStatus == 402 && e.ProviderBodyDigest != f.ProviderBodyDigest:
			found = Violation(EquivalentRequestsAgree, "%s: the same request with %s under a completed key was answered %s, not the first response (%s)", n.of(ref), shapeWords(kind), answer(e), answer(f))
		}
		return found.Holds()
	})
	return found
}

// JudgedAfter names the invariant whose holding name's judgement rests
// on, or "" for none: equivalent-requests-agree judges a request shape
// only under a key shown to replay (eachJudgedShape), so a provider that
// never replays, a replay-consistent deviation, leaves it nothing to judge
// — NOT JUDGED, not held vacuously.
func JudgedAfter(name string) string {
	if name == EquivalentRequestsAgree {
		return ReplayConsistent
	}
	return ""
}

// eachJudgedShape calls judge, in order, with every shape probe e of w
// that equivalent-requests-agree judges, the key's first answer f and the
// probe's kind, until judge returns false. first is the key's first
// completed answer to this very content in this account, sent in the
// client's own shape; replayed counts the later answers in that shape
// equal to it, and unsteady marks a key with one that differs (the shape
// probe sends one just before itself, probe.go). A shape is judged only
// under a key shown to replay: one the provider forgot (a retention too
// short), or replays wrongly, is replay-consistent's failure whatever the
// shape, not this one's.
func eachJudgedShape(w World, judge func(e, f models.Exchange, kind string) bool) {
	first := map[string]models.Exchange{}
	replayed := map[string]int{}
	unsteady := map[string]bool{}
	for _, e := range w.History.Exchanges {
		if !e.IsPost() || !e.HasKey || !e.ProviderDone || asOtherAccount(w.History, e) {
			continue
		}
		kind := ProbeKind(w.History, e)
		at := e.Key + "\x00" + e.Fingerprint
		f, seen := first[at]
		if !IsShape(kind) {
			switch {
			case e.ProviderStatus == 409 || e.ProviderStatus >= 500 || refusedStoreDown(e):
			case !seen:
				first[at] = e
			case e.ProviderStatus != f.ProviderStatus || e.ProviderBodyDigest != f.ProviderBodyDigest:
				unsteady[at] = true
			default:
				replayed[at]++
			}
			continue
		}
		if !seen || replayed[at] == 0 || unsteady[at] || refusedStoreDown(e) {
			continue // the key is not shown to replay this content in the client's shape
		}
		if !judge(e, f, kind) {
			return
		}
	}
}

// shapesShown counts the shape probes of w that showed something: judged
// (eachJudgedShape) under a key whose first answer was a charge (a 2xx). A
// shape under a declined key repeating the decline shows nothing, since
// the card declines whatever the shape; these are still judged (a charge
// there is a violation) but are no subject of the invariant, so that a
// provider that never charges leaves it INCONCLUSIVE (held vacuously),
// never PASS.
func shapesShown(w World) int {
	n := 0
	eachJudgedShape(w, func(_, f models.Exchange, _ string) bool {
		if f.ProviderStatus >= 200 && f.ProviderStatus < 300 {
			n++
		}
		return true
	})
	return n
}

// shapeWords names a probe shape inside a message: "a trailing slash".
func shapeWords(kind string) string {
	switch kind {
	case ProbeTrailingSlash:
		return "a trailing slash"
	case ProbeQuery:
		return "an unrelated query parameter"
	case ProbeReordered:
		return "its fields in another order"
	case ProbeWhitespace:
		return "other whitespace"
	}
	return kind
}
