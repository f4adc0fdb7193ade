package certify

import (
	"fmt"
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

// notOfDialect says why a FAIL drawn from evidence is no verdict, or "":
// every create the provider answered with an outcome (not transiently,
// not a redirect: allTransient) got an answer that is not of the dialect
// (models.OfDialect: a 2xx that is no charge, an error body that is not
// JSON), so whatever the requirement compared, it compared bodies the
// dialect does not speak. A lookup of the dialect that lists two charges
// under one reference shows a deviation by itself: the FAIL then stands.
func notOfDialect(evidence []models.Exchange, dialect string) string {
	seen := map[string]int{}
	for _, e := range evidence {
		switch {
		case e.Method == http.MethodGet && e.Final() && !e.ProviderForeign && strings.Contains(e.ProviderChargeID, ","):
			return "" // the dialect's own lookup shows two charges
		case !e.Forwarded || !e.IsPost() || !e.Final():
			continue // the proxy's own fault, a lookup, or no outcome (allTransient)
		case !e.ProviderForeign:
			return "" // one answer of the dialect: the verdict stands
		}
		what := "not JSON"
		if e.ProviderStatus >= 200 && e.ProviderStatus <= 299 {
			what = "not a charge"
		}
		seen[strconv.Itoa(e.ProviderStatus)+" "+what]++
	}
	if len(seen) == 0 {
		return ""
	}
	return fmt.Sprintf("the provider's answers are not charges of the %q dialect: every create it answered got a body the dialect does not speak (%s), and a verdict compared from them is none", dialect, reports.Tally(seen))
}

// busyAnswer says why a FAIL drawn from evidence is no verdict, or "":
// the provider answered one of its requests 429 (too many requests) or 503
// (unavailable) — retry-later answers (docs/profiles.md: transient) — and
// nothing in the evidence shows a charge twice (a lookup listing two
// charges under one reference, or one key and body answered with two
// charges), so the FAIL may be the provider being busy, not its
// idempotency. Found against a provider answering every fifth request
// 429: a retry answered 429 read as "not the first response".
func busyAnswer(evidence []models.Exchange) string {
	busy := map[string]int{}
	charged := map[string]string{} // key and body → first charge id
	for _, e := range evidence {
		switch {
		case e.Method == http.MethodGet && e.Final() && strings.Contains(e.ProviderChargeID, ","):
			return "" // the lookup shows two charges
		case e.Method != http.MethodPost || !e.Forwarded || !e.ProviderDone:
		case e.ProviderStatus == http.StatusTooManyRequests || e.ProviderStatus == http.StatusServiceUnavailable:
			busy[strconv.Itoa(e.ProviderStatus)]++
		case e.ProviderStatus >= 200 && e.ProviderStatus < 300 && e.HasKey && e.ProviderChargeID != "":
			k := e.Path + " " + e.Key + " " + e.Fingerprint
			if id, ok := charged[k]; ok && id != e.ProviderChargeID {
				return "" // one key and body answered with two charges
			}
			charged[k] = e.ProviderChargeID
		}
	}
	if len(busy) == 0 {
		return ""
	}
	return "the provider answered " + reports.Tally(busy) + " (retry later) to a request of this requirement, and nothing shows a charge twice: not a verdict on its idempotency"
}
