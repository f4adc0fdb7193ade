package check

import "github.com/idemcheck/idemcheck/models"

// Against a remote provider the harness sees only the answers, not the
// order in which the provider decided, so replay-consistent and
// mismatch-rejected are judged there by what no order of decisions can
// explain (the certification's porcupine requirements judge the rest):
//
//   - replay-consistent: every final answer (2xx, and 402 when the profile
//     says errors are stored) to one key and one body is the same answer
//     (status and body digest, so the same charge id); a request that left
//     after the key's final answer came back is not answered 409.
//   - mismatch-rejected: one key never gets final answers for two bodies
//     (fingerprints): only one of them can have been processed.
//
// Two answers neither of which is of the dialect (foreignPair) are not
// compared.
//
// Both assume no key expires during the run: conformance's remoteJudged
// says when that holds (the profile's retention window is at least the run's duration
// budget).

// RemoteSafety is invs with replay-consistent and mismatch-rejected judged
// from outside (see above), errorsStored being the profile's errors_stored.
func RemoteSafety(invs []Invariant, errorsStored bool) []Invariant {
	out := append([]Invariant(nil), invs...)
	for i, inv := range out {
		switch inv.Name {
		case ReplayConsistent:
			out[i].Check, out[i].step = func(w World) Finding { return checkRemoteReplay(w, errorsStored) }, nil
		case MismatchRejected:
			out[i].Check, out[i].step = func(w World) Finding { return checkRemoteMismatch(w, errorsStored) }, nil
		}
	}
	return out
}

// isFinal reports whether the provider's answer to e settles its key.
func isFinal(e models.Exchange, errorsStored bool) bool {
	s := e.ProviderStatus
	return s >= 200 && s <= 299 || errorsStored && s == 402
}

// answered is the keyed creates the provider answered, in the order of
// their answers.
func answered(w World) []models.Exchange {
	var out []models.Exchange
	for _, ev := range models.ProviderEvents(postsOf(w)) {
		if !ev.Arrival && ev.Ex.HasKey && ev.Ex.ProviderDone {
			out = append(out, *ev.Ex)
		}
	}
	return out
}

func checkRemoteReplay(w World, errorsStored bool) Finding {
	n := newNames(w)
	type keyBody struct{ key, fp string }
	first := map[keyBody]models.Exchange{} // the first final answer to a key and body
	firstOfKey := map[string]models.Exchange{}
	for _, e := range answered(w) {
		kb := keyBody{e.Key, e.Fingerprint}
		if f, ok := firstOfKey[e.Key]; ok && e.ProviderStatus == 409 && e.ArrivalSeq > f.ProviderSeq {
			return Violation(ReplayConsistent, "%s: a retry sent after the key was answered %s got 409, as if it were still in flight", n.of(e.MerchantReference), answer(f))
		}
		if !isFinal(e, errorsStored) {
			continue
		}
		f, ok := first[kb]
		switch {
		case !ok:
			first[kb] = e
			if _, ok := firstOfKey[e.Key]; !ok {
				firstOfKey[e.Key] = e
			}
		case foreignPair(e, f):
			continue // two bodies the dialect does not speak: nothing to compare
		case e.ProviderStatus != f.ProviderStatus || e.ProviderBodyDigest != f.ProviderBodyDigest:
			return Violation(ReplayConsistent, "%s: one key and body were answered %s, then %s: a completed key answers its first response", n.of(e.MerchantReference), answer(f), answer(e))
		}
	}
	return Finding{}
}

func checkRemoteMismatch(w World, errorsStored bool) Finding {
	n := newNames(w)
	bodyOf := map[string]models.Exchange{} // key → the first final answer's exchange
	for _, e := range answered(w) {
		if !isFinal(e, errorsStored) {
			continue
		}
		f, ok := bodyOf[e.Key]
		switch {
		case !ok:
			bodyOf[e.Key] = e
		case e.Fingerprint != f.Fingerprint && !foreignPair(e, f):
			return Violation(MismatchRejected, "%s: one key was answered %s for one body and %s for another, not refused", n.of(e.MerchantReference), answer(f), answer(e))
		}
	}
	return Finding{}
}

// foreignPair reports whether neither answer is of the dialect
// (models.OfDialect, recorded as ProviderForeign): two 201s of random
// bytes are no charges, and a judgement compared from them alone is none;
// one answer of the dialect keeps the comparison.
func foreignPair(a, b models.Exchange) bool { return a.ProviderForeign && b.ProviderForeign }
