package certify

import (
	"fmt"

	"github.com/idemcheck/idemcheck/faults"
)

// checkHangUp: the proxy forwards a create and closes the upstream
// connection faults.HangUpAfter (100 ms) later, while a provider that
// takes longer is still processing it (its request context is cancelled).
// The provider must finish and store the response regardless: a retry
// with the same key settles to a 201 naming the only charge the lookup by
// reference finds. A provider answering within 100 ms just has its answer
// lost, as in lost-response-settled: the retry must then answer that
// response.
func checkHangUp(r *runner) (verdict, string, error) {
	r.proxy.Schedule([]faults.Fault{{Kind: faults.KindHangUp}})
	key, body := r.newKeyHeader(), r.charge("hang-up")
	first, err := r.post(key, body)
	if err != nil {
		return inc, "", err
	}
	if first.err == nil {
		return inc, "the client did not hang up (the proxy passed the answer)", nil
	}
	a, tries, err := r.settle(key, body)
	if err != nil {
		return inc, "", err
	}
	if a.unknown() {
		return fail, fmt.Sprintf("after the hang-up, %d retries with the same key still answered %s", tries, a.short()), nil
	}
	if a.status != 201 {
		return inc, fmt.Sprintf("the retry after the hang-up answered %s, not 201", a.short()), nil
	}
	if hung := r.evidence()[0]; hung.ProviderDone && hung.ProviderStatus == 201 && a.digest() != hung.ProviderBodyDigest {
		return fail, fmt.Sprintf("after the client hung up, the provider had answered 201 %s, and the retry with the same key answered %s, not that response", hung.ProviderChargeID, a.short()), nil
	}
	// The one charge found must be the one the retry named: a lookup that
	// finds some other charge (a sandbox's fixture) settles nothing, and
	// lost-response-settled reads the same evidence as a FAIL.
	if why, err := r.theCharge(body.MerchantReference, a.chargeID()); err != nil || why != "" {
		return fail, "after the client hung up mid-processing and retried with the same key, " + why, err
	}
	// Not r.judged: the hung-up request's completion is never seen (the
	// proxy closed its connection), so models.Spec has no step for it, and
	// "in flight, 409, then the replay" of a correct provider slower than
	// the hang-up had no linearization (TestCertify_HangUpOnASlowCorrect-
	// ProviderPasses). The claim is the settled 201 and the one charge.
	return pass, "", nil
}
