package certify

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
)

// allTransient says why evidence is no verdict, or "": no create reached
// the provider, or every create that reached it got a transient answer — 429, a 5xx, or none it
// could read (timeout, reset, oversize, cut), or a redirect (3xx, never
// followed, so no answer of the dialect) — so a verdict drawn from it
// would blame the provider for being busy or down. The proxy's own
// injected faults do not count: they never reached it.
func allTransient(evidence []models.Exchange) string {
	seen := map[string]int{}
	for _, e := range evidence {
		if !e.Forwarded || !e.IsPost() {
			continue // the proxy's own fault, or the harness's lookup
		}
		switch {
		case !e.ProviderDone:
			seen[noAnswer(e.Err)]++
		case e.ProviderStatus == http.StatusTooManyRequests || e.ProviderStatus >= 500:
			seen[strconv.Itoa(e.ProviderStatus)]++
		case e.ProviderStatus >= 300 && e.ProviderStatus < 400:
			seen[strconv.Itoa(e.ProviderStatus)+" redirect"]++ // recorded, never followed: no answer of the dialect
		default:
			return "" // one real answer: the verdict stands
		}
	}
	if len(seen) == 0 {
		return "no create of this requirement reached the provider: the answers were the proxy's own faults" // nothing to judge it by
	}
	return "every answer of the provider was transient or a redirect (" + reports.Tally(seen) + "): not a verdict on its idempotency"
}

// noAnswer names why a forwarded request got no answer the harness could
// read, from the exchange's error: "no answer (timeout)", "no answer
// (oversize)".
func noAnswer(err string) string {
	for _, c := range []string{"oversize", "timeout", "connection refused", "budget"} {
		if strings.Contains(err, c) {
			return "no answer (" + c + ")"
		}
	}
	return "no answer"
}
