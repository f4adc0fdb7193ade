package check

import "github.com/idemcheck/idemcheck/models"

// checkDeclinesRunOnce is replay-consistent's side-effect half: when the
// provider's declines are stored (the reference profile says so), a
// decline retried under its key is replayed, not run again, even when a
// rerun's body is byte-identical to the stored one (a decline body with no
// id). So the provider may have processed no more declines than the
// requests it answered 402 under a free key, or without a key, plus those
// still at it (and a 402 that is no replay under a mismatched key, which
// mismatch-rejected names). Judged only when the provider counts its declines
// (World.Declines ≥ 0).
func checkDeclinesRunOnce(w World) Finding {
	if w.Declines < 0 || w.Killable {
		return Finding{}
	}
	allowed := declinesAllowed(replaySpec(w))
	for _, e := range postsOf(w) {
		if e.Forwarded && !e.ProviderDone {
			allowed++ // may have declined, unrecorded yet
		}
	}
	for _, e := range w.History.Exchanges {
		// The second merchant's probes (probe_shapes.go) are outside
		// postsOf; its key space is its own, so a declined card under a
		// key of merchant A is a fresh decline of merchant B.
		if e.IsPost() && ProbeKind(w.History, e) == ProbeOtherAccount && (e.ProviderStatus == 402 || e.Forwarded && !e.ProviderDone) {
			allowed++
		}
	}
	return declinesFinding(w, allowed)
}

// declinesAllowed is how many of verdicts vs may have processed a decline:
// a 402 under a free key or without one.
func declinesAllowed(vs []specVerdict) int {
	allowed := 0
	for _, v := range vs {
		x, e := v.expect, v.ex
		switch {
		case e.ProviderStatus != 402:
		case x.Kind == models.ExpectProcess || x.Kind == models.ExpectMissingKey:
			allowed++
		case x.Kind == models.ExpectMismatch && !x.Matches(e.ProviderStatus, e.ProviderBodyDigest):
			allowed++ // another body processed under a key: mismatch-rejected names it
		}
	}
	return allowed
}

// declinesFinding judges the provider's declines against allowed.
func declinesFinding(w World, allowed int) Finding {
	if w.Declines > allowed {
		return Violation(ReplayConsistent, "the provider processed %d declines but answered only %d requests 402 under a free key: a stored decline was run again", w.Declines, allowed)
	}
	return Finding{}
}

// refusalFormat is mismatch-rejected's format half: a mismatch refused
// with 409 or 422 is refused with problem details (application/problem+
// json; draft §2.7, RFC 9457), as every error answer of the reference
// dialect is. Judged only where the wire recorded the answer's headers.
func refusalFormat(v specVerdict, n *names) Finding {
	e := v.ex
	if v.expect.Kind != models.ExpectMismatch || (e.ProviderStatus != 409 && e.ProviderStatus != 422) || e.ProviderHeaders == (models.ResponseHeaders{}) {
		return Finding{}
	}
	if !e.ProviderHeaders.IsProblem() {
		return Violation(MismatchRejected, "%s: a request reusing a key with another body was refused %d as %q, not as problem details (%s)", n.of(e.MerchantReference), e.ProviderStatus, e.ProviderHeaders.ContentType, models.ProblemContentType)
	}
	return Finding{}
}
