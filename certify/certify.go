package certify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// Options tune a certification run; the zero value of a field means its
// default.
type Options struct {
	// Concurrency is how many requests with one key the concurrency
	// requirement sends at once (released together by a hold barrier in
	// the proxy); default 3.
	Concurrency int
	// MaxTries bounds the sends with one key when settling an unknown
	// outcome (no response, 409, 429, 5xx); default 5.
	MaxTries int
	// RequestTimeout bounds each request; default 15s.
	RequestTimeout time.Duration
	// RetentionWaitMax is the longest the retention requirement may wait
	// for a window to nearly pass; default 2m. A profile window longer
	// than this is not waited out: a key stored before the first
	// requirement is re-sent after the last (FAIL if forgotten by then,
	// else NOT JUDGED, saying how long it was kept).
	RetentionWaitMax time.Duration
	// CheckTimeout bounds each linearizability check; default 10s (then
	// the requirement is INCONCLUSIVE).
	CheckTimeout time.Duration
	// Only, when not empty, runs just these requirement ids; the others
	// are INCONCLUSIVE ("not selected").
	Only []string
	// ReadyTimeout bounds the wait, after a lifecycle hook, until the
	// provider answers a find-by-reference again; default 30s (then the
	// requirement is INCONCLUSIVE).
	ReadyTimeout time.Duration
	// RestartAfter is how long after a create is sent the restart hook
	// runs while it is in flight (restart-releases-held-key); default
	// 100ms.
	RestartAfter time.Duration
	// OutageStep is how long after a create sent while the store is down
	// the store is brought back, unless the create is answered first
	// (store-outage-refused); default 2s: longer than a store client's own
	// reconnect tries (go-redis: 5 × 100 ms), so that a provider that
	// takes a store error for a cache miss has taken it before the store
	// is back.
	OutageStep time.Duration
	// Progress, if set, is told each requirement's result as soon as it
	// is known (reports.Progress.Requirement prints one line per
	// requirement), so a long remote run is not silent.
	Progress func(reports.RequirementResult)
}

func (o Options) withDefaults() Options {
	if o.Concurrency < 2 {
		o.Concurrency = 3
	}
	if o.MaxTries <= 0 {
		o.MaxTries = 5
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = 15 * time.Second
	}
	if o.RetentionWaitMax <= 0 {
		o.RetentionWaitMax = 2 * time.Minute
	}
	if o.CheckTimeout <= 0 {
		o.CheckTimeout = 10 * time.Second
	}
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = 30 * time.Second
	}
	if o.RestartAfter <= 0 {
		o.RestartAfter = 100 * time.Millisecond
	}
	if o.OutageStep <= 0 {
		o.OutageStep = 2 * time.Second
	}
	return o
}

// Certify builds the remote provider from cfg — refusing, before any
// request, a live-looking key or a production profile (remote.ErrLiveCredential)
// — and runs the certification against it.
func Certify(ctx context.Context, cfg remote.Config, opts Options) (reports.Certification, error) {
	p, err := remote.New(cfg)
	if err != nil {
		return reports.Certification{}, err
	}
	return Run(ctx, p, opts)
}

// ErrDialect is returned by Run, with every requirement INCONCLUSIVE,
// when the provider does not answer find-by-reference in the configured
// dialect: a wrong URL or dialect, not a verdict on the provider.
var ErrDialect = errors.New("certify: the provider does not answer in the dialect")

// ErrUnreachable is returned by Run, with every requirement INCONCLUSIVE,
// when no connection to the provider could be made on any of the
// preflight's tries (connection refused, no such host, no route, a
// connect timeout): a wrong URL or a provider that is down, not a wrong
// dialect, and no verdict on the provider.
var ErrUnreachable = errors.New("certify: provider unreachable")

// Run certifies p: every requirement of Requirements, in order, each with
// its verdict, the promise it was tested against (draft or profile) and
// the exchanges that decided it. A requirement that does not fit in what
// is left of the budgets is INCONCLUSIVE and sends nothing.
//
// Before any create, one find-by-reference for a reference nobody used
// must answer 200 with a charge list (an empty one); otherwise nothing
// else is sent, every requirement is INCONCLUSIVE with that exchange as
// its evidence, and the error wraps ErrDialect (a server that is not the
// provider, or the wrong IDEMCHECK_DIALECT, would otherwise be judged
// FAIL on answers like 404 or 501), or ErrUnreachable when no connection
// could be made at all; Options.Progress is then not called (one cause,
// which the error says once). Then one key is sent in both its forms,
// quoted and bare (keyform.go): every later create is sent in a form the
// provider accepted, quoted-key-equals-bare-key is judged on those two
// answers, and Run leaves p sending the property's keys in that form
// (remote.Provider.SetKeyForm; Certification.KeyForm names it); both
// forms refused with 400 is ErrKeyForm, handled as ErrDialect is. The
// other errors are for a run that could not start (the proxy); verdicts
// carry the rest.
func Run(ctx context.Context, p *remote.Provider, opts Options) (reports.Certification, error) {
	opts = opts.withDefaults()
	prof := p.Profile()
	cert := reports.Certification{
		RunID: p.RunID(), Provider: reports.RedactURL(p.BaseURL()), Dialect: p.Dialect(), Profile: prof.Name,
		Started: time.Now().UTC(),
	}
	ctx, cancel := context.WithDeadline(ctx, p.Meter().Deadline())
	defer cancel()
	hist := models.NewHistory()
	maxBody := p.Config().Limits.MaxBody
	var wire http.RoundTripper = p.Transport()
	var lag *remote.LagGate
	if d := p.Profile().LookupLagDuration(); d > 0 {
		lag = remote.NewLagGate(wire, d)
		wire = lag
	}
	proxy, err := faults.NewProxy(p.RequestBase(), wire, hist, nil, maxBody) // the transport adds BaseURL's path
	if err != nil {
		return cert, err
	}
	defer proxy.Close()
	r := &runner{
		ctx: ctx, p: p, opts: opts, hist: hist, proxy: proxy, maxBody: maxBody, life: &lifecycle{}, lag: lag,
		client: noRedirects(&http.Transport{DisableKeepAlives: true}),
	}
	if p2, ok := p.Account2(); ok {
		t := faults.NewTransport(&faults.RemoteWire{Next: p2.Transport(), History: hist, MaxBody: maxBody}, hist, nil)
		t.MaxBody = maxBody
		r.account = noRedirects(t)
	}
	only := map[string]bool{}
	for _, id := range opts.Only {
		only[id] = true
	}
	notDialect := r.preflight()
	if notDialect == nil {
		notDialect = r.learnKeyForms()
	}
	defer func() { p.SetKeyForm(r.form) }() // the property sends keys in the form learned
	p.SetKeyForm("")                        // the requirements send each key as written
	notTested := ""
	if notDialect != nil {
		notTested = "not tested: " + notDialect.Error()
	}
	var planted *retentionPlant // the retention requirement's key, re-sent after every other requirement
	if notDialect == nil && (len(only) == 0 || only[ReqRetention]) && r.retentionTooLong() {
		planted = r.plantRetention()
	}
	late, lateReq := -1, Requirement{} // the retention requirement and its place in cert.Requirements, when judged last
	for _, req := range Requirements() {
		res := reports.RequirementResult{ID: req.ID, Title: req.Title, Source: req.Source, Against: req.against(prof), Level: req.Level}
		switch {
		case req.ID == ReqRetention && planted != nil:
			late, lateReq = len(cert.Requirements), req
			cert.Requirements = append(cert.Requirements, res)
			continue
		case notDialect != nil:
			res.Verdict, res.Reason = reports.Inconclusive, notTested
			res.Evidence = r.hist.Snapshot().Exchanges
		case len(only) > 0 && !only[req.ID]:
			res.Verdict, res.Reason = reports.Inconclusive, "not selected for this run"
		default:
			res = r.run(req, res)
		}
		cert.Requirements = append(cert.Requirements, res)
		if opts.Progress != nil && notDialect == nil { // one cause for all: the error says it once
			opts.Progress(res)
		}
	}
	if late >= 0 {
		res := r.lateRetention(lateReq, cert.Requirements[late], planted)
		cert.Requirements[late] = res
		if opts.Progress != nil {
			opts.Progress(res)
		}
	}
	cert.Finished = time.Now().UTC()
	cert.Budgets = p.Meter().Budgets()
	cert.KeyForm = r.form
	cert.Hooks = r.life.runs
	return cert, notDialect
}

// preflight asks find-by-reference about a reference nobody used and
// returns an error wrapping ErrDialect unless the answer is a charge list.
// A budget too small for it, or a Retry-After longer than the run has
// left, is left to the requirements to report (INCONCLUSIVE).
//
// A transient answer (no response, 429 or a 5xx) is not a verdict on the
// dialect: the lookup is asked again, up to preflightTries times, after
// what Retry-After asks (else 1 s, then 2 s).
func (r *runner) preflight() error {
	ref := "idemcheck-" + r.p.RunID() + "-preflight" // not one of Provider.Charges' references: nothing to re-read
	for try := 1; ; try++ {
		_, err := r.find(ref)
		if err == nil || errors.Is(err, errBudget) {
			return nil
		}
		var le lookupError
		if !errors.As(err, &le) || !le.a.unknown() || le.a.status == http.StatusConflict || try >= preflightTries {
			if errors.As(err, &le) && le.a.unreachable() {
				return unreachableError{reports.RedactURL(r.p.BaseURL()), err}
			}
			return dialectError{r.p.Dialect(), err}
		}
		wait := time.Second << (try - 1)
		if le.a.header != nil {
			if ra := remote.RetryAfter(&http.Response{Header: le.a.header}, time.Now()); ra > 0 {
				wait = ra
			}
		}
		if dl, ok := r.ctx.Deadline(); ok && time.Until(dl) < wait {
			return nil // the duration budget ends first: the requirements say INCONCLUSIVE on it, as the property does
		}
		if pause(r.ctx, wait) != nil {
			return nil // the run's time is up: as above
		}
	}
}

// preflightTries bounds the preflight lookups when the answers are
// transient.
const preflightTries = 3

// dialectError is the preflight's failure: Is ErrDialect, Unwraps to why.
type dialectError struct {
	dialect string
	why     error
}

// Error names the real cause first (connection refused, timeout,
// oversize, a redirect, a transient status), then the dialect hint.
func (e dialectError) Error() string {
	return fmt.Sprintf("the first find-by-reference failed: %v; so %v %q, or is not reachable: check the URL (idemcheck certify URL, or IDEMCHECK_PROVIDER) and the dialect (--dialect, or IDEMCHECK_DIALECT) (nothing else was sent)", e.why, ErrDialect, e.dialect)
}
func (e dialectError) Is(target error) bool { return target == ErrDialect }
func (e dialectError) Unwrap() error        { return e.why }

// run runs one requirement and fills its verdict and evidence.
func (r *runner) run(req Requirement, res reports.RequirementResult) reports.RequirementResult {
	proxyN := len(r.hist.Snapshot().Exchanges)
	r.start, r.shown, r.prior = proxyN, nil, nil
	c := costOf(req, r.opts)
	if err := r.afford(c.requests, c.posts); err != nil {
		res.Verdict, res.Reason = reports.Inconclusive, err.Error()+" for this requirement"
		return res
	}
	began := time.Now()
	v, reason, err := req.check(r)
	res.Seconds = time.Since(began).Seconds()
	r.proxy.Schedule(nil)
	switch {
	case errors.Is(err, errBudget):
		v, reason = reports.Inconclusive, err.Error()
	case err != nil:
		v, reason = reports.Inconclusive, "could not be tested: "+err.Error()
	}
	res.Evidence = r.evidence()
	if (v == fail || v == pass) && !req.ownVerdicts {
		if why := allTransient(res.Evidence); why != "" {
			was := fmt.Sprintf("the %s it would have been", v)
			if reason != "" {
				was += ": " + reason
			}
			v, reason = inc, why+" ("+was+")"
		}
	}
	if v == fail && !req.ownVerdicts {
		if why := notOfDialect(res.Evidence, r.p.Dialect()); why != "" {
			v, reason = inc, why+" (the FAIL it would have been: "+reason+")"
		} else if why := busyAnswer(res.Evidence); why != "" {
			v, reason = inc, why+" (the FAIL it would have been: "+reason+")"
		}
	}
	res.Verdict, res.Reason = v, reason
	if v == fail {
		res.Linearizability = r.shown
	}
	return res
}

// noRedirects is a client through t that never follows a redirect: a 3xx
// is the answer, evidence like any other (the wire below strips Location
// too).
func noRedirects(t http.RoundTripper) *http.Client {
	return &http.Client{Transport: t, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// WriteJSON writes cert to dir/certification.json (dir is created) and
// returns the file's path. The API key is never in it: reports carry no
// headers but the Idempotency-Key, and remote.APIKey marshals redacted.
func WriteJSON(dir string, cert reports.Certification) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	b, err := json.MarshalIndent(cert, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "certification.json")
	return path, os.WriteFile(path, append(reports.Scrub(b), '\n'), 0o644)
}
