package certify

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/anishathalye/porcupine"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
)

// The card tokens of docs/provider-api.md.
const (
	tokMastercard = "tok_mastercard"
	tokDeclined   = "tok_chargeDeclined"
)

type verdict = reports.Verdict

const (
	pass = reports.Pass
	fail = reports.Fail
	inc  = reports.Inconclusive
	// nj: the run's setup rules the requirement out (reports.NotJudged).
	nj = reports.NotJudged
)

// evidence is the exchanges of the requirement running so far, after
// those it took from before it started (r.prior: the preflight's, for
// quoted-key-equals-bare-key).
func (r *runner) evidence() []models.Exchange {
	return append(append([]models.Exchange(nil), r.prior...), r.hist.Snapshot().Exchanges[r.start:]...)
}

// judge runs the linearizability check over the requirement's exchanges:
// ok, or a FAIL / INCONCLUSIVE reason.
func (r *runner) judge() (verdict, string) {
	res, page := linearizableShown(r.evidence(), r.opts.CheckTimeout)
	r.shown = page // porcupine's visualisation of an illegal history, for the run folder
	switch res {
	case porcupine.Illegal:
		return fail, "no order of the provider's decisions explains its answers under models.Spec (porcupine: illegal)"
	case porcupine.Unknown:
		return inc, "the linearizability check ran out of time"
	}
	return pass, ""
}

// judged is v, reason unless the linearizability check fails first.
func (r *runner) judged(v verdict, reason string) (verdict, string, error) {
	if v == pass {
		v, reason = r.judge()
	}
	return v, reason, nil
}

// created sends body under keyHeader and wants a 201: anything else makes
// the requirement INCONCLUSIVE (it cannot be tested without a first charge).
func (r *runner) created(keyHeader string, body models.ChargeRequest) (answer, string, error) {
	a, err := r.post(keyHeader, body)
	if err != nil {
		return a, "", err
	}
	if a.err != nil || a.status != 201 {
		return a, fmt.Sprintf("the first create answered %s, not 201", a.short()), nil
	}
	if !a.ofDialect() {
		return a, fmt.Sprintf("the first create answered 201 with a body that is not a charge of the %q dialect: no charge to compare a replay with", r.p.Dialect()), nil
	}
	return a, "", nil
}

// same reports whether b repeats a's status and body, a being an answer
// of the dialect (identical HTML pages are no replay of a charge).
func same(a, b answer) bool {
	return a.ofDialect() && b.err == nil && a.status == b.status && a.digest() == b.digest()
}

// unmarked says why the replay a (named what) does not carry the replay header the
// profile publishes (absent, or "false", "0", "?0"), or "" when it does or
// the profile publishes none (profile: replay_header).
func (r *runner) unmarked(what string, a answer) string {
	h := r.p.Profile().ReplayHeader
	if h == "" {
		return ""
	}
	switch v := strings.TrimSpace(a.header.Get(h)); strings.ToLower(v) {
	case "":
		return fmt.Sprintf("%s carried no %s header, which the profile publishes (profile: replay_header)", what, h)
	case "false", "0", "?0":
		return fmt.Sprintf("%s carried %s: %s, not a replay mark (profile: replay_header)", what, h, v)
	}
	return ""
}

// charges checks the lookup by body's reference finds exactly want
// charges; the reason says what it found otherwise.
func (r *runner) charges(ref string, want int) (string, error) {
	cs, err := r.find(ref)
	if err != nil {
		return "", err
	}
	if len(cs) == want {
		return "", nil
	}
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	return fmt.Sprintf("lookup by merchant reference found %d charges [%s], want %d", len(cs), strings.Join(ids, " "), want), nil
}

func checkReplay(r *runner) (verdict, string, error) {
	key := r.newKeyHeader()
	body := r.charge("replay")
	first, why, err := r.created(key, body)
	if err != nil || why != "" {
		return inc, why, err
	}
	again, err := r.post(key, body)
	if err != nil {
		return inc, "", err
	}
	var failed []string // the success's and the decline's: both are sent
	if !same(first, again) {
		failed = append(failed, fmt.Sprintf("a retry with the same key and body answered %s, not the first response %s", again.short(), first.short()))
	} else {
		failed = appendWhy(failed, sameHeaders(first, again), r.unmarked("the replay", again))
	}
	d, err := r.declineReplay()
	if err != nil {
		return inc, "", err
	}
	if failed = append(failed, d.failed...); len(failed) > 0 {
		return fail, strings.Join(failed, "; "), nil
	}
	v, reason, err := r.judged(pass, "")
	switch {
	case v != pass:
		return v, reason, err
	case d.untold != "":
		return nj, "the success's replay holds, but " + d.untold, nil
	}
	return pass, d.note, nil
}

// appendWhy appends each non-empty reason of whys to failed.
func appendWhy(failed []string, whys ...string) []string {
	for _, w := range whys {
		if w != "" {
			failed = append(failed, w)
		}
	}
	return failed
}

// declined is what replay-returns-first-response's decline half showed:
// why it was not tested (note), how its replay failed, or why the
// profile's errors_stored claim cannot be told over a URL (untold).
type declined struct {
	note, untold string
	failed       []string
}

// declineReplay tests the profile's errors_stored claim: a declining
// card's 402, sent again under its key, answers the first 402. A 402
// whose body names no decline id (models.ErrorBody.DeclineID) is
// byte-identical whether it was replayed or the decline ran again, so an
// identical answer is no evidence of a stored error: untold says so.
func (r *runner) declineReplay() (declined, error) {
	if !r.p.Profile().ErrorsStored {
		return declined{note: "decline replay not tested: the profile says errors are not stored"}, nil
	}
	key, body := r.newKeyHeader(), r.charge("replay-decline")
	body.Source = tokDeclined
	d1, err := r.post(key, body)
	if err != nil {
		return declined{}, err
	}
	if d1.err != nil || d1.status != 402 || !d1.ofDialect() {
		return declined{note: fmt.Sprintf("decline replay not tested: the declining card answered %s, not a 402 of the dialect", d1.short())}, nil
	}
	d2, err := r.post(key, body)
	if err != nil {
		return declined{}, err
	}
	if !same(d1, d2) {
		return declined{failed: []string{fmt.Sprintf("a retried decline answered %s with another body, not the first 402", d2.short())}}, nil
	}
	if f := appendWhy(nil, sameHeaders(d1, d2), r.unmarked("the decline's replay", d2)); len(f) > 0 {
		return declined{failed: f}, nil
	}
	var e models.ErrorBody
	if json.Unmarshal(d1.body, &e) != nil || e.Error.DeclineID == "" {
		return declined{untold: "the profile's errors_stored claim cannot be told over a URL: the 402 names no decline id, so a decline run again is byte-identical to its replay"}, nil
	}
	return declined{}, nil
}

func checkMismatch(r *runner) (verdict, string, error) {
	key := r.newKeyHeader()
	body := r.charge("mismatch")
	_, why, err := r.created(key, body)
	if err != nil || why != "" {
		return inc, why, err
	}
	other := func(f func(*models.ChargeRequest)) models.ChargeRequest { b := body; f(&b); return b }
	variants := []struct {
		what string
		body models.ChargeRequest
	}{
		{"amount", other(func(b *models.ChargeRequest) { b.Amount++ })},
		{"currency", other(func(b *models.ChargeRequest) { b.Currency = "EUR" })},
		{"card", other(func(b *models.ChargeRequest) { b.Source = tokMastercard })},
	}
	var failed []string // every variant is sent; each that failed, in order
	for _, v := range variants {
		a, err := r.post(key, v.body)
		if err != nil {
			return inc, "", err
		}
		if a.err != nil || a.status != 422 {
			failed = append(failed, fmt.Sprintf("the same key with another %s answered %s, not 422 (wire status %d per the profile)", v.what, a.short(), r.p.Profile().Statuses.Mismatch))
		}
	}
	why, err = r.charges(body.MerchantReference, 1)
	if err != nil {
		return inc, "", err
	}
	if why != "" {
		failed = append(failed, why)
	}
	if len(failed) > 0 {
		return fail, strings.Join(failed, "; "), nil
	}
	return r.judged(pass, "")
}

// theCharge checks the lookup by ref finds exactly the charge id; the
// reason says what it found otherwise. hang-up-settled and
// lost-response-settled judge their evidence by it alike.
func (r *runner) theCharge(ref, id string) (string, error) {
	cs, err := r.find(ref)
	if err != nil {
		return "", err
	}
	if len(cs) == 1 && cs[0].ID == id {
		return "", nil
	}
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	return fmt.Sprintf("lookup by merchant reference found [%s], want exactly the charge %s", strings.Join(ids, " "), id), nil
}

func checkMissingKey(r *runner) (verdict, string, error) {
	prof := r.p.Profile()
	if !prof.KeyRequired {
		return r.keylessRetry()
	}
	body := r.charge("missing-key")
	a, err := r.post("", body)
	if err != nil {
		return inc, "", err
	}
	if a.transient() {
		return inc, fmt.Sprintf("a create without Idempotency-Key answered %s: transient, not a refusal or an acceptance", a.short()), nil
	}
	if a.status != 400 && !a.ofDialect() {
		return inc, fmt.Sprintf("a create without Idempotency-Key answered %s, not an answer of the %q dialect", a.short(), r.p.Dialect()), nil
	}
	if a.status != 400 {
		return fail, fmt.Sprintf("a create without Idempotency-Key answered %s, not 400", a.short()), nil
	}
	why, err := r.charges(body.MerchantReference, 0)
	if err != nil || why != "" {
		return fail, why, err
	}
	return pass, "", nil
}

func checkConcurrent(r *runner) (verdict, string, error) {
	n := r.opts.Concurrency
	sched := make([]faults.Fault, n)
	for i := range n - 1 {
		sched[i] = faults.Fault{Kind: faults.KindHold, Delay: r.opts.RequestTimeout / 2}
	}
	sched[n-1] = faults.Fault{Kind: faults.KindPass}
	r.proxy.Schedule(sched)
	key, body := r.newKeyHeader(), r.charge("concurrent")
	answers := make([]answer, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { answers[i], errs[i] = r.post(key, body) })
	}
	wg.Wait()
	r.proxy.Schedule(nil)
	seen := make([]string, n)
	final := false // a 2xx seen: then exactly one charge, else at most one
	for i := range n {
		if errs[i] != nil {
			return inc, "", errs[i]
		}
		seen[i] = answers[i].short()
		final = final || answers[i].status >= 200 && answers[i].status <= 299
	}
	cs, err := r.find(body.MerchantReference)
	if err != nil {
		return inc, "", err
	}
	switch {
	case len(cs) > 1:
		return fail, fmt.Sprintf("%d concurrent requests with one key (answers %s): lookup by merchant reference found %d charges, at most 1 allowed", n, strings.Join(seen, ", "), len(cs)), nil
	case len(cs) == 0 && final:
		return fail, fmt.Sprintf("%d concurrent requests with one key (answers %s): a 2xx was answered but lookup by merchant reference found no charge", n, strings.Join(seen, ", ")), nil
	}
	v, reason := r.judge()
	if v != pass {
		reason = fmt.Sprintf("%s; answers %s", reason, strings.Join(seen, ", "))
	}
	return v, reason, nil
}

func checkLostResponse(r *runner) (verdict, string, error) {
	r.proxy.Schedule([]faults.Fault{{Kind: faults.KindLoseResponse}})
	key, body := r.newKeyHeader(), r.charge("lost-response")
	first, err := r.post(key, body)
	if err != nil {
		return inc, "", err
	}
	lost := r.evidence()[0]
	if first.err == nil || !lost.ProviderDone {
		return inc, "the response was not lost after the provider answered", nil
	}
	if lost.ProviderStatus != 201 {
		return inc, fmt.Sprintf("the provider answered the lost request %d, not 201", lost.ProviderStatus), nil
	}
	a, tries, err := r.settle(key, body)
	if err != nil {
		return inc, "", err
	}
	if a.unknown() {
		return fail, fmt.Sprintf("after the lost response, %d retries with the same key still answered %s", tries, a.short()), nil
	}
	if a.status != lost.ProviderStatus || a.digest() != lost.ProviderBodyDigest {
		return fail, fmt.Sprintf("the retry answered %s, not the lost response 201 %s", a.short(), lost.ProviderChargeID), nil
	}
	if why, err := r.theCharge(body.MerchantReference, lost.ProviderChargeID); err != nil || why != "" {
		return fail, why, err
	}
	return r.judged(pass, "")
}

func checkRetries(r *runner) (verdict, string, error) {
	r.proxy.Schedule([]faults.Fault{{Kind: faults.KindStatus500}, {Kind: faults.KindStatus429, RetryAfter: 1}, {Kind: faults.KindStatus503}})
	key, body := r.newKeyHeader(), r.charge("retries")
	a, tries, err := r.settle(key, body)
	if err != nil {
		return inc, "", err
	}
	if a.unknown() {
		v, reason := r.judge()
		if v == pass {
			v = fail
		}
		return v, fmt.Sprintf("%d sends with the same key after 500, 429 and 503 still answered %s; %s", tries, a.short(), reason), nil
	}
	if !a.ofDialect() {
		return inc, fmt.Sprintf("the key settled on %s, not an answer of the %q dialect: nothing to compare a retry with", a.short(), r.p.Dialect()), nil
	}
	again, err := r.post(key, body)
	if err != nil {
		return inc, "", err
	}
	if !same(a, again) {
		return fail, fmt.Sprintf("a retry after the key settled on %s answered %s", a.short(), again.short()), nil
	}
	want := 0
	if a.status == 201 {
		want = 1
	}
	why, err := r.charges(body.MerchantReference, want)
	if err != nil || why != "" {
		return fail, why, err
	}
	return r.judged(pass, "")
}

func checkCrossAccount(r *runner) (verdict, string, error) {
	if r.account == nil {
		return nj, "needs a second account's API key (IDEMCHECK_API_KEY_2)", nil
	}
	key, body := r.newKeyHeader(), r.charge("cross-account")
	first, why, err := r.created(key, body)
	if err != nil || why != "" {
		return inc, why, err
	}
	other, err := r.postAs(key, body)
	if err != nil {
		return inc, "", err
	}
	switch {
	case same(first, other), other.chargeID() != "" && other.chargeID() == first.chargeID():
		return fail, fmt.Sprintf("the second account sending the first account's key got its response replayed (%s)", other.short()), nil
	case other.status == 409 || other.status == 422:
		return fail, fmt.Sprintf("the second account sending the first account's key was refused with %s: one account's key blocked another's", other.short()), nil
	}
	return pass, "", nil
}
