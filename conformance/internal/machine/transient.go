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

// notOfDialect says why a violation against a URL is no verdict, or "":
// every create the provider answered with an outcome (not 429, a 5xx or
// a redirect) got an answer that is not of the dialect (models.OfDialect:
// a 2xx that is no charge, an error body that is not JSON), so what the
// invariant judged was the client's reading of bodies the dialect does
// not speak. The certification's requirements say the same
// (certify.notOfDialect).
func (m *Machine) notOfDialect() string {
	if !m.w.real || !m.w.cfg.IsRemote() || m.w.cfg.Remote == nil {
		return ""
	}
	seen := map[string]int{}
	for _, e := range m.w.hist.Snapshot().Exchanges {
		switch {
		case !e.IsPost() || !e.Final():
			continue
		case !e.ProviderForeign:
			return "" // one answer of the dialect: the verdict stands
		}
		what := "not JSON"
		if e.ProviderStatus >= 200 && e.ProviderStatus <= 299 {
			what = "not a charge"
		}
		seen[fmt.Sprint(e.ProviderStatus)+" "+what]++
	}
	if len(seen) == 0 {
		return ""
	}
	return fmt.Sprintf("the provider's answers are not charges of the %q dialect: every create it answered got a body the dialect does not speak (%s): not judged", m.w.cfg.Remote.Dialect(), reports.Tally(seen))
}
