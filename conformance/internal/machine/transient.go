package machine

import (
	"fmt"
	"net/http"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/reports"
)

// unsettled says why liveness cannot be judged against a remote provider
// from the history's exchange from on (the final phase, after the faults
// healed), or "": the provider itself answered 429 or a 5xx, or a request
// was held back by its Retry-After or got no answer. reconciliation-
// converges promises convergence once faults heal; a provider that is
// rate limiting or down has not healed, so blaming the client (or the
// provider's idempotency) would be wrong: the run stops INCONCLUSIVE
// with this reason. Only a run against a URL (not WireMock, whose answers
// the harness programs) is judged so.
func (m *Machine) unsettled(from int) string {
	if !m.w.real || !m.w.cfg.IsRemote() {
		return ""
	}
	exs := m.w.hist.Snapshot().Exchanges
	seen := map[string]int{}
	for _, e := range exs[min(from, len(exs)):] {
		if e.Fault != "" && e.Fault != string(faults.KindPass) {
			continue // an injected fault, not the provider's answer
		}
		switch {
		case e.ProviderDone && (e.ProviderStatus == http.StatusTooManyRequests || e.ProviderStatus >= 500):
			seen[fmt.Sprint(e.ProviderStatus)]++
		case e.Done && !e.Forwarded && e.Err != "":
			seen["not sent ("+e.Err+")"]++
		}
	}
	if len(seen) == 0 {
		return ""
	}
	return "the provider did not settle once the faults healed (" + reports.Tally(seen) + "): reconciliation-converges not judged"
}

// unavailable is why a run stopped on a transient answer to the harness's
// own find-by-reference: the provider's truth could not be read.
func unavailable(err error) string {
	return fmt.Sprintf("the provider's charges could not be read (%v): a provider that is rate limiting or down is not judged", err)
}

// unreadable is why a run against a URL stopped when the provider's
// answer to the harness's own find-by-reference could not be read (over
// the body cap, malformed, a redirect, no answer): no verdict, the cause
// named.
func unreadable(err error) string {
	return fmt.Sprintf("the provider's charges could not be read (%v): not judged", err)
}
