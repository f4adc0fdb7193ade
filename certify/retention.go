package certify

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
)

// checkRetention is the retention requirement when the profile's window
// is short enough to wait out (at most Options.RetentionWaitMax): a key
// re-sent just inside the window (less min(10 %, 5 s)), timed from when
// the first create was sent, still replays. A
// longer window is judged by plantRetention and lateRetention instead.
func checkRetention(r *runner) (verdict, string, error) {
	window := time.Duration(r.p.Profile().RetentionWindow)
	wait := window - min(window/10, 5*time.Second)
	if dl, ok := r.ctx.Deadline(); ok && time.Until(dl) < wait+2*r.opts.RequestTimeout {
		return inc, fmt.Sprintf("%s: waiting %s does not fit in the duration left", errBudget, wait), nil
	}
	key, body := r.newKeyHeader(), r.charge("retention")
	sent := time.Now() // a provider may age the key from its arrival: the wait is timed from here
	first, why, err := r.created(key, body)
	if err != nil || why != "" {
		return inc, why, err
	}
	if time.Since(sent) >= wait {
		return inc, fmt.Sprintf("the first create took %s to answer, longer than the %s wait: no retry fits inside the window", spanWords(time.Since(sent)), wait), nil
	}
	if err := pause(r.ctx, wait-time.Since(sent)); err != nil {
		if why := r.p.Meter().Interrupted(); why != "" {
			return inc, fmt.Sprintf("%s: %s while waiting", errBudget, why), nil
		}
		return inc, fmt.Sprintf("%s: duration spent while waiting", errBudget), nil
	}
	again, err := r.post(key, body)
	if err != nil {
		return inc, "", err
	}
	if !same(first, again) {
		return fail, fmt.Sprintf("a retry sent %s after the first create, inside the published %s window, answered %s, not the replay of %s", wait, window, again.short(), first.short()), nil
	}
	return pass, "", nil
}

// retentionTooLong reports whether the profile's window is longer than
// the run may wait (Options.RetentionWaitMax).
func (r *runner) retentionTooLong() bool {
	return time.Duration(r.p.Profile().RetentionWindow) > r.opts.RetentionWaitMax
}

// retentionPlant is the key the retention requirement stored at the start
// of a run whose window is too long to wait out, re-sent at the end of the
// requirements (before the property).
type retentionPlant struct {
	key      string
	body     models.ChargeRequest
	first    answer    // the first create's 201
	sent     time.Time // when the first create was sent: the key is stored after
	at       time.Time // when the first create's answer came
	why      string    // not "": the first create did not store a charge (INCONCLUSIVE)
	err      error     // a budget or the run stopped it
	evidence []models.Exchange
	seconds  float64
}

// plantRetention creates one charge under a new key before any other
// requirement runs, when both it and its re-send fit in the budgets, and
// keeps one request and one create of the budgets for the re-send
// (runner.reserved), so that no later requirement spends them.
func (r *runner) plantRetention() *retentionPlant {
	n := len(r.hist.Snapshot().Exchanges)
	began := time.Now()
	pl := &retentionPlant{key: r.newKeyHeader(), body: r.charge("retention"), sent: began}
	if pl.err = r.afford(2, 2); pl.err == nil {
		pl.first, pl.why, pl.err = r.created(pl.key, pl.body)
	}
	pl.at = time.Now()
	pl.evidence = r.hist.Snapshot().Exchanges[n:]
	pl.seconds = time.Since(began).Seconds()
	if pl.err == nil && pl.why == "" {
		r.reserved = cost{1, 1}
	}
	return pl
}

// lateRetention judges the retention requirement at the end of the requirements,
// after every other requirement (no wall time of its own): the key
// planted at the start is re-sent with the identical request. A replay
// keeps the verdict NOT JUDGED (the rest of the window is not waited
// out), saying how long the key was shown to be kept; any other final
// answer is FAIL: the key was forgotten well inside the window.
func (r *runner) lateRetention(req Requirement, res reports.RequirementResult, pl *retentionPlant) reports.RequirementResult {
	r.reserved = cost{}
	switch {
	case errors.Is(pl.err, errBudget):
		res.Verdict, res.Reason = inc, pl.err.Error()+" for this requirement"
	case pl.err != nil:
		res.Verdict, res.Reason = inc, "could not be tested: "+pl.err.Error()
	case pl.why != "":
		res.Verdict, res.Reason = inc, pl.why
	default:
		req.cost = cost{1, 1}
		req.check = func(r *runner) (verdict, string, error) { return r.resend(pl) }
		res = r.run(req, res)
	}
	res.Evidence = append(pl.evidence, res.Evidence...)
	res.Seconds += pl.seconds
	return res
}

// resend sends the planted key's request again and judges the answer.
func (r *runner) resend(pl *retentionPlant) (verdict, string, error) {
	prof := r.p.Profile()
	window := windowWords(time.Duration(prof.RetentionWindow))
	held := spanWords(time.Since(pl.at))
	w := time.Duration(prof.RetentionWindow)
	late := time.Since(pl.sent) >= w-min(w/10, 5*time.Second)
	again, err := r.post(pl.key, pl.body)
	if err != nil {
		return inc, "", err
	}
	switch {
	case again.transient():
		return inc, fmt.Sprintf("the key stored at the start of the run, re-sent %s later, answered %s: transient, nothing shown about its retention", held, again.short()), nil
	case !same(pl.first, again) && late:
		return inc, fmt.Sprintf("the key stored at the start of the run was re-sent %s later, after its %s window (less the margin) had passed: the requirements between outlasted it, and its answer %s shows nothing about its retention", held, window, again.short()), nil
	case !same(pl.first, again):
		return fail, fmt.Sprintf("forgotten after ~%s; the profile publishes %s: the key stored at the start of the run (first answered %s), re-sent with the identical request %s later, answered %s, not the replay", held, window, pl.first.short(), held, again.short()), nil
	}
	return nj, fmt.Sprintf("held %s of its %s window (the key stored at the start of the run replayed %s at the end of the requirements); profile %q's window is longer than the %s this run may wait", held, window, again.short(), prof.Name, r.opts.RetentionWaitMax), nil
}

// spanWords is d for a reason: milliseconds under 1 s ("6ms"), tenths of
// a second under 10 s ("1.2s"), whole seconds above ("12s", "1m5s").
func spanWords(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// windowWords is a published window without its zero minutes and seconds:
// "24h", "90m", "2m30s".
func windowWords(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "h0m0s") {
		s = strings.TrimSuffix(s, "0m0s")
	}
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	return s
}
