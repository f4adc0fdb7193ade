package certify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// runner drives one certification run: it sends docs/provider-api.md requests
// through the fault proxy (or, for the second account, a recording
// transport) and reads the history. Sends are bounded by the meter (checked
// before every request), the run's deadline and the per-request timeout.
type runner struct {
	ctx     context.Context // ends at the duration budget
	p       *remote.Provider
	opts    Options
	hist    *models.History
	proxy   *faults.Proxy
	maxBody int64 // the body cap, bytes (remote.Limits.MaxBody)
	client  *http.Client
	account *http.Client // the second account's client, nil without one
	start   int          // the first exchange index of the requirement running
	// prior are exchanges from before the requirement running that are
	// its evidence too (the preflight's key-form probe); nil for most.
	prior []models.Exchange
	// form is the key form creates are sent in (remote.KeyFormQuoted or
	// KeyFormBare), set by the preflight (learnKeyForms); forms is what
	// its probe showed, with formsEvidence its exchanges (nil when the
	// dialect or the profile fixed the form, or a budget stopped it).
	form          string
	forms         *keyForms
	formsEvidence []models.Exchange
	shown         []byte // porcupine's visualisation of its illegal history, nil if none
	// reserved is kept of the budgets for a send still to come (the
	// retention requirement's re-send at the end of the run): afford
	// counts it as spent. Written between requirements only.
	reserved cost
	life     *lifecycle // the lifecycle hooks' runs (lifecycle.go)
	mu       sync.Mutex // guards op
	op       int
	// lag waits out the profile's lookup_lag after creates
	// (settleLookups); nil when the profile publishes none.
	lag *remote.LagGate
}

// errBudget marks a requirement stopped by a budget: its verdict is
// INCONCLUSIVE.
var errBudget = errors.New("budget")

// answer is what the client got for one request.
type answer struct {
	status int
	body   []byte
	header http.Header
	err    error // a transport error: the outcome is unknown
}

func (a answer) digest() string { return models.BodyDigest(a.body) }

// chargeID is the id in a 2xx charge body, or "".
func (a answer) chargeID() string {
	if a.status < 200 || a.status > 299 {
		return ""
	}
	var c models.Charge
	_ = json.Unmarshal(a.body, &c) // a body that is not a charge has no id
	return c.ID
}

// short describes the answer for a reason: "201 ch_000001", "409", "no
// response (timeout)", "302 redirect (not followed)".
func (a answer) short() string {
	switch {
	case a.err != nil:
		return "no response (" + a.cause() + ")"
	case a.chargeID() != "":
		return fmt.Sprintf("%d %s", a.status, a.chargeID())
	case a.status >= 300 && a.status < 400:
		return fmt.Sprintf("%d redirect (not followed)", a.status)
	}
	return strconv.Itoa(a.status)
}

// unknown reports whether the outcome is unknown and worth a retry with
// the same key: no response, 409, 429 or a 5xx.
func (a answer) unknown() bool {
	return a.err != nil || a.status == 409 || a.transient()
}

// transient reports whether the answer says "not now" rather than a
// verdict: no response (timeout, reset), 429 or a 5xx.
func (a answer) transient() bool {
	return a.err != nil || a.status == 429 || a.status >= 500
}

// ofDialect reports whether the answer to a create is one the dialect
// speaks (models.OfDialect): JSON, and for a 2xx a charge with an id. A
// 201 of HTML is no charge to compare a replay with.
func (a answer) ofDialect() bool {
	return a.err == nil && models.OfDialect(models.Exchange{Method: http.MethodPost, Path: "/v1/charges"}, a.status, a.body)
}

func (r *runner) nextOp() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.op++
	return r.op
}

// charge is a new request body of this run under a new merchant reference.
func (r *runner) charge(label string) models.ChargeRequest {
	return models.ChargeRequest{
		Amount: 1099, Currency: "USD", Source: "tok_visa",
		Description:       "idemcheck certification run " + r.p.RunID(),
		MerchantReference: r.p.Reference(label),
	}
}

func newKey() string { return uuid.NewString() }

// afford fails with errBudget, without sending, when requests (posts of
// them creates) do not fit in the budget beside what is reserved, or the
// run's time is up.
func (r *runner) afford(requests, posts int) error {
	if why := r.p.Meter().Interrupted(); why != "" {
		return fmt.Errorf("%w: %s", errBudget, why)
	}
	if err := r.p.Meter().Held(); err != nil {
		return fmt.Errorf("%w: %s", errBudget, strings.TrimSuffix(strings.TrimPrefix(err.Error(), "remote: "), "; request not sent"))
	}
	if r.ctx.Err() != nil {
		return r.spent()
	}
	if ok, what := r.p.Meter().Afford(requests+r.reserved.requests, posts+r.reserved.posts); !ok {
		return fmt.Errorf("%w: not enough %s left", errBudget, what)
	}
	return nil
}

// spent is the errBudget of a run whose time is up: its interrupt
// (remote.Meter.Interrupt), else its duration budget.
func (r *runner) spent() error {
	if why := r.p.Meter().Interrupted(); why != "" {
		return fmt.Errorf("%w: %s", errBudget, why)
	}
	return fmt.Errorf("%w: duration of %s spent", errBudget, r.p.Config().Limits.MaxDuration)
}

// post sends one create through the proxy: keyHeader is the
// Idempotency-Key header value as sent ("" for none).
func (r *runner) post(keyHeader string, body models.ChargeRequest) (answer, error) {
	return r.send(r.client, http.MethodPost, r.proxy.URL+"/v1/charges", keyHeader, body)
}

// postAs sends one create as the second account.
func (r *runner) postAs(keyHeader string, body models.ChargeRequest) (answer, error) {
	return r.send(r.account, http.MethodPost, r.p.RequestBase()+"/v1/charges", keyHeader, body) // the transport adds BaseURL's path
}

func (r *runner) send(c *http.Client, method, url, keyHeader string, body models.ChargeRequest) (answer, error) {
	if err := r.afford(1, 1); err != nil {
		return answer{}, err
	}
	b, _ := json.Marshal(body) // a plain struct
	return r.sendBytes(c, method, url, keyHeader, b)
}

// sendBytes is send with the body's bytes as they are (a request shape:
// shapes.go); the meter has already been asked.
func (r *runner) sendBytes(c *http.Client, method, url, keyHeader string, b []byte) (answer, error) {
	ctx, cancel := context.WithTimeout(r.ctx, r.opts.RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(b))
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(faults.OpHeader, strconv.Itoa(r.nextOp()))
	if keyHeader != "" {
		req.Header.Set(models.IdempotencyKeyHeader, keyHeader)
	}
	return r.do(c, req)
}

func (r *runner) do(c *http.Client, req *http.Request) (answer, error) {
	resp, err := c.Do(req)
	if err != nil {
		if why := r.p.Meter().Interrupted(); why != "" {
			return answer{}, fmt.Errorf("%w: %s", errBudget, why)
		}
		if r.ctx.Err() != nil {
			return answer{}, r.spent()
		}
		if errors.Is(err, remote.ErrBudget) {
			return answer{}, fmt.Errorf("%w: %v", errBudget, err)
		}
		return answer{err: err}, nil
	}
	defer resp.Body.Close()
	b, err := faults.ReadBody(resp.Body, r.maxBody)
	if err != nil {
		return answer{err: err}, nil
	}
	a := answer{status: resp.StatusCode, body: b, header: resp.Header}
	switch resp.Header.Get(faults.WireErrorHeader) {
	case faults.WireNotSent: // a budget, or the provider's Retry-After, refused it
		return a, fmt.Errorf("%w: %s", errBudget, problemDetail(b))
	case faults.WireFailed: // the proxy's 502, not the provider's: the request failed on the wire
		return answer{err: wireFailure(problemDetail(b))}, nil
	}
	return a, nil
}

// cause is why an answer with an error has none: "oversize", "timeout",
// "connection refused", ….
func (a answer) cause() string {
	if wf, ok := a.err.(wireFailure); ok {
		return wf.cause()
	}
	return remote.Cause(a.err)
}

// wireFailure is a request that failed between the proxy and the
// provider, as the proxy's problem detail tells it ("remote: oversize:
// …", a *remote.WireError's text).
type wireFailure string

func (w wireFailure) Error() string { return string(w) }

// cause is the failure's first words: "oversize", "timeout",
// "connection refused".
func (w wireFailure) cause() string {
	c, _, _ := strings.Cut(strings.TrimPrefix(string(w), "remote: "), ":")
	return c
}

// problemDetail is the detail of the proxy's problem body.
func problemDetail(b []byte) string {
	var p models.Problem
	_ = json.Unmarshal(b, &p) // the proxy's own JSON
	return p.Detail
}

// find lists the charges with merchant reference ref through the proxy.
func (r *runner) find(ref string) ([]models.Charge, error) {
	if err := r.afford(1, 0); err != nil {
		return nil, err
	}
	if err := r.settleLookups(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(r.ctx, r.opts.RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.proxy.URL+"/v1/charges?merchant_reference="+ref, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set(faults.OpHeader, strconv.Itoa(r.nextOp()))
	a, err := r.do(r.client, req)
	if err != nil {
		return nil, err
	}
	if a.err != nil || a.status != http.StatusOK {
		return nil, lookupError{a}
	}
	var list models.ChargeList
	if err := json.Unmarshal(a.body, &list); err != nil {
		return nil, fmt.Errorf("lookup by reference: the answer is not a charge list")
	}
	return list.Data, nil
}

// lookupError is a find-by-reference that did not answer 200.
type lookupError struct{ a answer }

// Error names the real cause: the wire's error, a redirect and where it
// pointed, a transient status, or the status.
func (e lookupError) Error() string {
	switch a := e.a; {
	case a.err != nil:
		return "lookup by reference got no answer (" + a.cause() + "): " + a.err.Error()
	case a.status >= 300 && a.status < 400:
		return fmt.Sprintf("lookup by reference answered %d, a redirect to %s (not followed)", a.status, reports.RedactURL(a.header.Get(remote.RedirectHeader)))
	case a.transient():
		return fmt.Sprintf("lookup by reference answered %d (transient: the provider is busy or down)", a.status)
	}
	return "lookup by reference answered " + e.a.short()
}

// settle sends body under keyHeader until the outcome is known (not
// unknown()) or Options.MaxTries sends were made. Between tries it waits
// what a 429 or 503 asks in Retry-After, else 100 ms doubling to 1.6 s; a
// Retry-After longer than the run has left stops it with errBudget.
func (r *runner) settle(keyHeader string, body models.ChargeRequest) (answer, int, error) {
	var a answer
	for try := 1; ; try++ {
		var err error
		if a, err = r.post(keyHeader, body); err != nil {
			return a, try, err
		}
		if !a.unknown() || try >= r.opts.MaxTries {
			return a, try, nil
		}
		wait := min(100*time.Millisecond<<(try-1), 1600*time.Millisecond)
		if a.header != nil && (a.status == 429 || a.status == 503) {
			if ra := remote.RetryAfter(&http.Response{Header: a.header}, time.Now()); ra > 0 {
				wait = ra
			}
		}
		if dl, ok := r.ctx.Deadline(); ok && time.Until(dl) < wait {
			return a, try, fmt.Errorf("%w: Retry-After %s is longer than the run has left", errBudget, wait)
		}
		if err := pause(r.ctx, wait); err != nil {
			return a, try, r.spent()
		}
	}
}

// pause waits d or until ctx ends (then its error).
// settleLookups waits, before a lookup by reference, for the profile's
// lookup_lag (none by default) to pass when a create was forwarded to the
// provider since the last lookup (remote.LagGate): a requirement that
// counts charges must not read the lag as a missing charge (issue 28).
// Each lookup after a create then costs the lag; the duration budget
// bounds the waits (a spent budget: INCONCLUSIVE).
func (r *runner) settleLookups() error {
	if r.lag == nil {
		return nil
	}
	if err := r.lag.Wait(r.ctx); err != nil {
		return r.spent()
	}
	return nil
}

func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
