package certify

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
)

// retryAfterWhy says why a's Retry-After is not a hint (absent, or
// neither delay-seconds nor an HTTP-date: RFC 9110 §10.2.3), or "".
func retryAfterWhy(a answer) string {
	return retryAfterValueWhy(a.header.Get("Retry-After"))
}

// retryAfterValueWhy is retryAfterWhy of a Retry-After value ("" absent).
func retryAfterValueWhy(v string) string {
	v = strings.TrimSpace(v)
	if v == "" {
		return "carried no Retry-After"
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return ""
	}
	if _, err := http.ParseTime(v); err == nil {
		return ""
	}
	return fmt.Sprintf("carried Retry-After %q, neither delay-seconds nor an HTTP-date", v)
}

// slowBody is body paid with the profile's slow trigger, and whether the
// profile publishes one.
func (r *runner) slowBody(body models.ChargeRequest) (models.ChargeRequest, time.Duration, bool) {
	t := r.p.Profile().SlowTrigger
	if t == nil {
		return body, 0, false
	}
	if t.Source != "" {
		body.Source = t.Source
	} else {
		body.Amount = t.Amount
	}
	return body, t.Length(), true
}

// slowPair sends body (paid with the slow trigger, processed for d)
// under key, and after lead the same request again while the first is
// still processing: both answers, and whether the first was still
// unanswered when the second was sent.
func (r *runner) slowPair(key string, body models.ChargeRequest, lead time.Duration) (first, second answer, inFlight bool, err error) {
	type res struct {
		a   answer
		err error
	}
	done := make(chan res, 1)
	go func() {
		a, err := r.post(key, body)
		done <- res{a, err}
	}()
	if err := pause(r.ctx, lead); err != nil {
		f := <-done
		return f.a, answer{}, false, r.spent()
	}
	var f res
	select {
	case f = <-done:
	default:
		inFlight = true
	}
	second, err = r.post(key, body)
	if inFlight {
		f = <-done
	}
	if err == nil {
		err = f.err
	}
	return f.a, second, inFlight, err
}

// checkInflightHint: two creates under one key at once (the hold
// barrier); every 409 answered must carry Retry-After. When neither got
// a 409 (a provider that answers faster than the second arrives) and the
// profile publishes a slow trigger, a slow create and the same request a
// quarter of its duration later (at most 500 ms) make one. No 409 of its
// own is never PASS: INCONCLUSIVE, or NOT JUDGED when the profile
// publishes no slow trigger (the setup then has no way to hold a create
// in flight, as for slow-request-charged-once).
func checkInflightHint(r *runner) (verdict, string, error) {
	key, body := r.newKeyHeader(), r.charge("inflight-hint")
	as, err := r.concurrent(key, body, body)
	if err != nil {
		return inc, "", err
	}
	seen := []string{as[0].short(), as[1].short()}
	slowToo := false
	if !has409(as) {
		if slow, d, ok := r.slowBody(r.charge("inflight-hint-slow")); ok {
			slowToo = true
			first, second, _, err := r.slowPair(r.newKeyHeader(), slow, min(d/4, 500*time.Millisecond))
			if err != nil {
				return inc, "", err
			}
			as = append(as, first, second)
			seen = append(seen, "slow "+first.short(), second.short())
		}
	}
	if !has409(as) {
		return noInflight409(r, seen, slowToo)
	}
	var failed []string
	for _, a := range as {
		if a.err == nil && a.status == http.StatusConflict {
			if why := retryAfterWhy(a); why != "" {
				failed = append(failed, "the 409 answered while the key was in flight "+why)
			}
		}
	}
	n, why := r.priorInflight409s()
	if len(failed) > 0 {
		return fail, fmt.Sprintf("%s (answers %s)", strings.Join(appendWhy(failed, why), "; "), strings.Join(seen, ", ")), nil
	}
	if why != "" {
		return fail, why, nil
	}
	return pass, fmt.Sprintf("answers %s; and %d 409s of other requirements answered while their key was in flight", strings.Join(seen, ", "), n), nil
}

// noInflight409 is checkInflightHint's verdict when its own requests met
// no 409 (their answers seen), slowToo when a slow create was tried:
// never PASS.
func noInflight409(r *runner, seen []string, slowToo bool) (verdict, string, error) {
	why := fmt.Sprintf("no request was answered 409 while its key was in flight (answers %s)", strings.Join(seen, ", "))
	if !slowToo {
		return nj, fmt.Sprintf("%s, and profile %q publishes no slow_trigger: over a URL the harness cannot make a provider hold a create in flight", why, r.p.Profile().Name), nil
	}
	return inc, why, nil
}

// priorInflight409s judges the Retry-After of every 409 the provider
// answered before this requirement started while its key was in flight:
// another request under the same key had reached the provider before it
// and was not yet answered when the 409 was (the history's order of
// events; the proxy's own faults are never forwarded, so never counted).
// How many it judged, and why some are not hints ("" if none); the first
// three join the requirement's evidence (r.prior).
func (r *runner) priorInflight409s() (int, string) {
	exs := r.hist.Snapshot().Exchanges[:r.start]
	n, bad := 0, map[string]int{}
	for _, e := range exs {
		if !e.Forwarded || !e.ProviderDone || e.ProviderStatus != http.StatusConflict || !e.HasKey || !keyInFlight(exs, e) {
			continue
		}
		n++
		why := retryAfterValueWhy(e.ProviderHeaders.RetryAfter)
		if why == "" {
			continue
		}
		if len(r.prior) < 3 {
			r.prior = append(r.prior, e)
		}
		bad[why]++
	}
	if len(bad) == 0 {
		return n, ""
	}
	return n, fmt.Sprintf("409s of other requirements answered while their key was in flight (%d in all): %s", n, reports.Tally(bad))
}

// keyInFlight is whether another request under e's key had been
// forwarded to the provider before e was answered and was not answered
// before e was. The proxy forwards two held requests at once, so which
// of them reaches the provider's lock first is the provider's race, not
// the order they were forwarded in: the 409 may go to either.
func keyInFlight(exs []models.Exchange, e models.Exchange) bool {
	for _, f := range exs {
		if f.ID == e.ID || !f.Forwarded || !f.HasKey || f.Key != e.Key || f.ArrivalSeq == 0 || f.ArrivalSeq >= e.ProviderSeq {
			continue
		}
		if !f.ProviderDone || f.ProviderSeq > e.ProviderSeq {
			return true
		}
	}
	return false
}

func has409(as []answer) bool {
	for _, a := range as {
		if a.err == nil && a.status == http.StatusConflict {
			return true
		}
	}
	return false
}

// checkSlowRequest: a create paid with the profile's slow trigger
// (processed for d), and the same request under its key three quarters
// of d later, while the first is still processing, past any shorter
// lock lease: the retry gets 409 (or, if the first finished, its
// replay), never a charge of its own, and lookup by reference finds the
// one charge. NOT JUDGED without a slow trigger: over a URL the harness
// cannot make a provider slow.
func checkSlowRequest(r *runner) (verdict, string, error) {
	body, d, ok := r.slowBody(r.charge("slow-request"))
	if !ok {
		return nj, fmt.Sprintf("profile %q publishes no slow_trigger: over a URL the harness cannot make a provider slower than its lock", r.p.Profile().Name), nil
	}
	if r.opts.RequestTimeout <= d {
		return inc, fmt.Sprintf("the request timeout %s is not longer than the slow trigger's %s: the slow create would time out", r.opts.RequestTimeout, d), nil
	}
	lead := d * 3 / 4
	key := r.newKeyHeader()
	first, retry, inFlight, err := r.slowPair(key, body, lead)
	if err != nil {
		return inc, "", err
	}
	seen := fmt.Sprintf("the slow create answered %s, the retry %s into its %s processing %s", first.short(), lead, d, retry.short())
	cs, err := r.find(body.MerchantReference)
	if err != nil {
		return inc, "", err
	}
	switch {
	case len(cs) > 1:
		return fail, fmt.Sprintf("%s: lookup by merchant reference found %d charges %s, at most 1 allowed (the in-flight lock ended before processing did)", seen, len(cs), ids(cs)), nil
	case retry.chargeID() != "" && first.chargeID() != "" && retry.chargeID() != first.chargeID():
		return fail, fmt.Sprintf("%s: the retry was charged on its own", seen), nil
	case !inFlight:
		return inc, fmt.Sprintf("%s: the slow create was answered before the retry was sent, so nothing was in flight (is the slow trigger right?)", seen), nil
	case first.err != nil || first.status != http.StatusCreated:
		return inc, fmt.Sprintf("%s: the slow create was not a 201 to judge the retry against", seen), nil
	case retry.status == http.StatusUnprocessableEntity:
		return fail, fmt.Sprintf("%s: the same request was refused as another body", seen), nil
	case len(cs) != 1 || cs[0].ID != first.chargeID():
		return fail, fmt.Sprintf("%s: lookup by merchant reference found %s, want exactly the charge %s", seen, ids(cs), first.chargeID()), nil
	}
	return pass, seen, nil
}
