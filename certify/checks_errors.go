package certify

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// The requirement ids of response headers, error formats, declines and
// in-flight mismatches (issue 10, items 4 and 5).
const (
	ReqReplayMarked     = "replay-marked"
	ReqProblemDetails   = "errors-are-problem-details"
	ReqDeclinedKey      = "declined-key-never-charges"
	ReqInflightMismatch = "inflight-mismatch-refused"
)

// headerRequirements are the requirements of this file, in their order.
func headerRequirements() []Requirement {
	return []Requirement{
		{ID: ReqReplayMarked, Level: reports.LevelMay,
			Title:  "A replay is marked with a replay header: judged as stated when the profile publishes one; NOT OFFERED, never a failure, when it publishes none and the replay carries no Idempotent-Replayed.",
			Source: "profile: replay_header; not in draft-ietf-httpapi-idempotency-key-header (a MAY of common practice)", against: replayHeaderClaim,
			cost: cost{2, 2}, check: checkReplayMarked},
		{ID: ReqProblemDetails, Level: reports.LevelShould,
			Title:  "Error answers are problem details (RFC 9457: application/problem+json with a title and the status; type absent means about:blank), in the reference dialect: the 400, 409, 422 and 404 this requirement provokes, by their bodies, and every other 4xx or 5xx (402 aside) the run has seen so far, by their Content-Type.",
			Source: "draft-ietf-httpapi-idempotency-key-header §2.7 (error scenarios, problem details); RFC 9457 §3; docs/provider-api.md", against: draft,
			cost: cost{7, 5}, check: checkProblemDetails},
		{ID: ReqDeclinedKey, Level: reports.LevelMust,
			Title:  "Another card under a declined key charges nothing: the stored 402 is replayed or 422 answered.",
			Source: "draft-ietf-httpapi-idempotency-key-header §2.7 (the server MUST fail a request that was not corrected); §2.5; docs/provider-api.md", against: draft,
			cost: cost{3, 2}, check: checkDeclinedKey},
		{ID: ReqInflightMismatch, Level: reports.LevelMust,
			Title:  "Two requests under one key with different amounts, at once (a double click with another amount), charge at most once: the later is refused with 409 or 422.",
			Source: "draft-ietf-httpapi-idempotency-key-header §2.6 (409 while in flight), §2.7 (422 for another payload); models.Spec", against: draft,
			cost: cost{3, 2}, check: checkInflightMismatch},
	}
}

// replayHeaderClaim: the profile's claim when it publishes a replay
// header, the draft's MAY otherwise.
func replayHeaderClaim(p remote.Profile) string {
	if p.ReplayHeader != "" {
		return AgainstProfile
	}
	return AgainstDraft
}

// sameHeaders says how the replay b changed a's meaningful headers
// (Location, Content-Type, Retry-After), or "".
func sameHeaders(a, b answer) string {
	d := models.HeadersOf(a.header, "").ReplayDiffers(models.HeadersOf(b.header, ""))
	if d == "" {
		return ""
	}
	return "the replay changed a header of the first response (" + d + ")"
}

func checkReplayMarked(r *runner) (verdict, string, error) {
	key, body := r.newKeyHeader(), r.charge("replay-marked")
	_, why, err := r.created(key, body)
	if err != nil || why != "" {
		return inc, why, err
	}
	again, err := r.post(key, body)
	if err != nil {
		return inc, "", err
	}
	if again.err != nil || again.status != 201 {
		return inc, fmt.Sprintf("the retry answered %s, not a replay to look at", again.short()), nil
	}
	if r.p.Profile().ReplayHeader != "" {
		if why := r.unmarked("the replay", again); why != "" {
			return fail, why, nil
		}
		return pass, "", nil
	}
	if strings.EqualFold(strings.TrimSpace(again.header.Get(models.ReplayedHeader)), "true") {
		return pass, "the replay carries Idempotent-Replayed: true, which the profile does not publish", nil
	}
	return reports.NotOffered, "the replay carries no replay header and the profile publishes none (a MAY)", nil
}

// problemOf says why a is not RFC 9457 problem details for its status, or "".
func problemOf(what string, a answer) string {
	if ct := models.HeadersOf(a.header, "").ContentType; !models.HeadersOf(a.header, "").IsProblem() {
		return fmt.Sprintf("%s answered %d with Content-Type %q, not %s", what, a.status, ct, models.ProblemContentType)
	}
	var p struct {
		Type   *string `json:"type"`
		Title  *string `json:"title"`
		Status *int    `json:"status"`
	}
	if err := json.Unmarshal(a.body, &p); err != nil {
		return fmt.Sprintf("%s answered %d with a body that is not a JSON problem object: %v", what, a.status, err)
	}
	switch {
	case p.Title == nil || *p.Title == "":
		return fmt.Sprintf("%s answered %d with problem details without a title", what, a.status)
	case p.Status == nil || *p.Status != a.status:
		return fmt.Sprintf("%s answered %d with problem details whose status is not %d", what, a.status, a.status)
	}
	return ""
}

func checkProblemDetails(r *runner) (verdict, string, error) {
	if r.p.Dialect() != remote.DialectReference {
		return nj, "the stripe dialect's errors are Stripe's error objects, turned into problem details by the adapter: nothing of the provider's to judge", nil
	}
	var seen, failed []string // every probe is sent; each that failed, in order
	judge := func(what string, a answer, want int) {
		if a.err != nil || a.status != want {
			return
		}
		seen = append(seen, fmt.Sprint(want))
		failed = appendWhy(failed, problemOf(what, a))
	}
	bad, err := r.post(`"unterminated`, r.charge("problem-400"))
	if err != nil {
		return inc, "", err
	}
	judge("a malformed Idempotency-Key", bad, 400)
	key, body := r.newKeyHeader(), r.charge("problem-422")
	if _, why, err := r.created(key, body); err != nil || why != "" {
		if len(failed) > 0 && err == nil {
			return fail, failed[0], nil // the 400's: the rest could not be sent
		}
		return inc, why, err
	}
	other := body
	other.Amount++
	mis, err := r.post(key, other)
	if err != nil {
		return inc, "", err
	}
	judge("the same key with another amount", mis, 422)
	as, err := r.concurrent(r.newKeyHeader(), r.charge("problem-409"), r.charge("problem-409"))
	if err != nil {
		return inc, "", err
	}
	for _, a := range as {
		judge("a request while its key was in flight", a, 409)
	}
	nf, err := r.sendRawKey(http.MethodGet, unknownPath, "", nil, 0)
	if err != nil {
		return inc, "", err
	}
	judge("a request for an unknown path", nf, 404)
	others, why := r.otherErrors()
	failed = appendWhy(failed, why)
	if len(failed) > 0 {
		return fail, strings.Join(failed, "; "), nil
	}
	if len(seen) == 0 && others == 0 {
		return inc, "no error answer (4xx but 402, 5xx) was answered to look at", nil
	}
	return pass, fmt.Sprintf("looked at %s; and %d error answers of other requirements by their Content-Type", strings.Join(seen, ", "), others), nil
}

// otherErrors judges, by Content-Type, every error answer (a 4xx but 402,
// a 5xx) the provider gave before this requirement started: how many it
// looked at, and why they are not problem details ("" if they are). The
// first three that are not join the requirement's evidence (r.prior).
func (r *runner) otherErrors() (int, string) {
	n, bad := 0, map[string]int{}
	for _, e := range r.hist.Snapshot().Exchanges[:r.start] {
		if !e.Forwarded || !e.ProviderDone || e.ProviderStatus < 400 || e.ProviderStatus == 402 {
			continue // the proxy's own faults, successes, declines
		}
		n++
		if e.ProviderHeaders.IsProblem() {
			continue
		}
		if len(r.prior) < 3 {
			r.prior = append(r.prior, e)
		}
		bad[fmt.Sprintf("%d %s (Content-Type %q)", e.ProviderStatus, e.Method, e.ProviderHeaders.ContentType)]++
	}
	if len(bad) == 0 {
		return n, ""
	}
	return n, fmt.Sprintf("error answers of other requirements are not %s: %s", models.ProblemContentType, reports.Tally(bad))
}

func checkDeclinedKey(r *runner) (verdict, string, error) {
	key, body := r.newKeyHeader(), r.charge("declined-key")
	body.Source = tokDeclined
	d, err := r.post(key, body)
	if err != nil {
		return inc, "", err
	}
	if d.err != nil || d.status != 402 || !d.ofDialect() {
		return inc, fmt.Sprintf("the declining card answered %s, not a 402 of the dialect", d.short()), nil
	}
	other := body
	other.Source = "tok_visa"
	a, err := r.post(key, other)
	if err != nil {
		return inc, "", err
	}
	if a.transient() {
		return inc, fmt.Sprintf("another card under the declined key answered %s: transient", a.short()), nil
	}
	if !(a.status == 422 || same(d, a)) {
		return fail, fmt.Sprintf("another card under the declined key answered %s, not the stored 402 nor 422", a.short()), nil
	}
	why, err := r.charges(body.MerchantReference, 0)
	if err != nil || why != "" {
		return fail, why, err
	}
	return r.judged(pass, "")
}

func checkInflightMismatch(r *runner) (verdict, string, error) {
	key, body := r.newKeyHeader(), r.charge("inflight-mismatch")
	other := body
	other.Amount++
	as, err := r.concurrent(key, body, other)
	if err != nil {
		return inc, "", err
	}
	seen := []string{as[0].short(), as[1].short()}
	cs, err := r.find(body.MerchantReference)
	if err != nil {
		return inc, "", err
	}
	if len(cs) > 1 {
		return fail, fmt.Sprintf("two requests under one key with amounts %d and %d at once (answers %s): lookup by merchant reference found %d charges, at most 1 allowed", body.Amount, other.Amount, strings.Join(seen, ", "), len(cs)), nil
	}
	if !takenUp(as) {
		// Neither request was processed nor refused as a conflict (404,
		// 400, ...): nothing was in flight to refuse the other under.
		return inc, fmt.Sprintf("neither request was taken up (answers %s): nothing was in flight to refuse the other under", strings.Join(seen, ", ")), nil
	}
	for _, a := range as {
		if a.status >= 200 && a.status <= 299 {
			continue
		}
		if !a.unknown() && a.status != 422 {
			return fail, fmt.Sprintf("two requests under one key with different amounts at once answered %s: the later is refused with 409 or 422", strings.Join(seen, ", ")), nil
		}
	}
	v, reason := r.judge()
	if v != pass {
		reason = fmt.Sprintf("%s; answers %s", reason, strings.Join(seen, ", "))
	}
	return v, reason, nil
}

// concurrent sends a and b under key at once: the proxy holds the first
// until the second arrives (faults.KindHold), as the concurrency
// requirement does.
func (r *runner) concurrent(key string, a, b models.ChargeRequest) ([]answer, error) {
	r.proxy.Schedule([]faults.Fault{{Kind: faults.KindHold, Delay: r.opts.RequestTimeout / 2}, {Kind: faults.KindPass}})
	defer r.proxy.Schedule(nil)
	out, errs := make([]answer, 2), make([]error, 2)
	var wg sync.WaitGroup
	for i, body := range []models.ChargeRequest{a, b} {
		wg.Go(func() { out[i], errs[i] = r.post(key, body) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// takenUp reports whether a create of as was processed (2xx, a 402
// decline), refused as a conflict (409, 422), or may have been (no
// answer, a transient one): what an in-flight requirement can judge.
func takenUp(as []answer) bool {
	for _, a := range as {
		switch {
		case a.unknown(), a.status >= 200 && a.status <= 299, a.status == 402, a.status == 409, a.status == 422:
			return true
		}
	}
	return false
}
