package faults

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/failsafe-go/failsafe-go/timeout"
	"github.com/idemcheck/idemcheck/internal/jsonread"
	"github.com/idemcheck/idemcheck/models"
)

// Transport is an http.RoundTripper that applies a fault schedule to the
// requests passing through it, in order of arrival, and records each one as
// a models.Exchange. The n-th request (counted from 0, GETs included) gets
// Schedule[n]; requests past the end of the schedule, or after Heal, pass,
// except after an outage (KindOutage, KindChargedThenUnreachable), which
// lasts until the next Schedule. A lookup lag (KindLookupLag) lasts for
// the Transport's life.
// It is safe for concurrent use.
type Transport struct {
	// Next is the wire behind the faults (InProcess, or an HTTP transport).
	Next http.RoundTripper
	// History receives every exchange.
	History *models.History
	// Now is the clock; default time.Now (virtual inside a synctest bubble).
	Now func() time.Time
	// MaxBody caps each request and response body read, in bytes; 0 means
	// DefaultMaxBody (1 MiB). A longer body is an *OversizeError.
	MaxBody int64
	// Dialect is the provider API the client speaks, when it is not
	// docs/provider-api.md (nil): requests are recorded, and status
	// faults answered, in it.
	Dialect Dialect
	// Lifecycle applies KindProviderRestart and KindStoreOutage through
	// the provider's hooks; nil: they pass.
	Lifecycle Lifecycle

	mu        sync.Mutex // guards schedule, n, healed, injected, arrived, storeDown, lag
	storeDown bool       // a KindStoreOutage took the store down this step (EndOutage)
	schedule  []Fault
	n         int
	healed    bool
	outage    bool // an outage hit this schedule (startsOutage): every later request gets KindOutage
	// lag is the lookup lag KindLookupLag gave the provider (LagLookups,
	// or a schedule's entry): every later request carries it.
	lag      time.Duration
	injected map[Kind]int
	// arrived is closed when a request that is not held arrives, waking
	// the held ones (KindHold); then replaced.
	arrived chan struct{}
}

// NewTransport returns a Transport applying schedule in front of next.
func NewTransport(next http.RoundTripper, history *models.History, schedule []Fault) *Transport {
	return &Transport{Next: next, History: history, schedule: append([]Fault(nil), schedule...), injected: map[Kind]int{}}
}

// Schedule replaces the schedule: from now on the n-th request (counted
// from 0 again) gets s[n], and requests past its end pass.
func (t *Transport) Schedule(s []Fault) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.schedule, t.n, t.outage = append([]Fault(nil), s...), 0, false
}

// Heal makes every later request pass.
func (t *Transport) Heal() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.healed = true
}

// Injected counts the faults other than pass applied so far, by kind.
func (t *Transport) Injected() map[Kind]int {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[Kind]int, len(t.injected))
	for k, v := range t.injected {
		out[k] = v
	}
	return out
}

// begin takes the next fault of the schedule and records the exchange
// under one lock, so that the n-th exchange recorded is the one that got
// schedule[n] even when requests race. wake is closed when the next
// request that is not held arrives (for KindHold).
func (t *Transport) begin(ex models.Exchange) (f Fault, id int, wake <-chan struct{}, lag time.Duration, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f = Fault{Kind: KindPass}
	switch {
	case t.healed:
	case t.outage:
		f = Fault{Kind: KindOutage}
	case t.n < len(t.schedule):
		f = t.schedule[t.n]
	}
	if isLifecycle(f.Kind) {
		f = t.takeLifecycle(f) // lifecycle.go
	}
	t.outage = t.outage || startsOutage(f.Kind)
	if f.Kind == KindLookupLag {
		t.lag = max(t.lag, f.Delay)
	}
	if _, ok := registry[f.Kind]; !ok {
		return f, 0, nil, 0, errors.New("faults: unknown fault kind " + string(f.Kind))
	}
	t.n++
	if f.Kind != KindPass {
		t.injected[f.Kind]++
	}
	if t.arrived == nil {
		t.arrived = make(chan struct{})
	}
	if f.Kind != KindHold {
		close(t.arrived)
		t.arrived = make(chan struct{})
	}
	ex.Fault = f.String()
	return f, t.History.BeginExchange(ex), t.arrived, t.lag, nil
}

func (t *Transport) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

type exchangeKey struct{}

// exchangeFrom returns the exchange id Transport put in ctx, or 0.
func exchangeFrom(ctx context.Context) int {
	id, _ := ctx.Value(exchangeKey{}).(int)
	return id
}

// RoundTrip applies the next fault of the schedule to req.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ex, body, err := describeIn(t.Dialect, req, t.MaxBody)
	if err != nil {
		return nil, err
	}
	ex.SentAt = t.now()
	ex.OpID = models.OpFrom(req.Context())
	f, id, wake, lag, err := t.begin(ex)
	if err != nil {
		return nil, err
	}

	ctx := context.WithValue(context.WithValue(withLookupLag(req.Context(), lag), exchangeKey{}, id), holdKey{}, wake)
	if isLifecycle(f.Kind) {
		ctx = context.WithValue(ctx, lifecycleKey{}, t)
	}
	// A shallow copy with its own body: a RoundTripper does not change the
	// request (net/http's contract), so its header map and URL are shared,
	// not cloned per try (issue 29).
	out := req.WithContext(ctx)
	out.Body = io.NopCloser(bytes.NewReader(body))
	apply := registry[f.Kind].apply
	if nw, ok := t.Next.(NativeFaults); ok && f.Kind != KindPass && nw.Native(f.Kind) {
		apply = nativeApply
	}
	resp, err := apply(ctx, f, out, func(r *http.Request) (*http.Response, error) {
		t.History.UpdateExchange(id, func(e *models.Exchange, _ int) { e.Forwarded = true })
		resp, err := t.Next.RoundTrip(r)
		var ns NotSent
		if err != nil && errors.As(err, &ns) && ns.NotSent() {
			t.History.UpdateExchange(id, func(e *models.Exchange, _ int) {
				e.Forwarded, e.ArrivalSeq, e.ArrivedAt = false, 0, time.Time{}
			})
		}
		return resp, err
	})
	if err == nil && t.Dialect != nil && IsStatus(f.Kind) {
		inDialect(t.Dialect, resp) // the fault layer answered in the provider's place
	}
	var respBody []byte
	if err == nil {
		respBody, err = ReadBody(resp.Body, t.MaxBody)
		_ = resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(respBody))
	}
	t.History.UpdateExchange(id, func(e *models.Exchange, _ int) {
		e.Done, e.DoneAt = true, t.now()
		if err != nil {
			e.Err = classify(req.Context(), err)
			return
		}
		e.Status = resp.StatusCode
		e.Replayed = resp.Header.Get(models.ReplayedHeader) == "true"
		e.ChargeID = chargeIDIn(t.Dialect, resp.StatusCode, respBody)
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// NotSent is implemented by a wire error for a request that never left
// (a budget refused it, as sut/remote's *BudgetError does): the exchange is
// then recorded as never forwarded, not as a request still at the provider.
type NotSent interface{ NotSent() bool }

// requestBody reads and closes req's body (nil for none), at most limit
// bytes.
func requestBody(req *http.Request, limit int64) ([]byte, error) {
	if req.Body == nil {
		return nil, nil
	}
	defer req.Body.Close()
	return ReadBody(req.Body, limit)
}

// describe reads what the exchange record needs from req, keeping the body.
func describe(req *http.Request, limit int64) (models.Exchange, []byte, error) {
	ex := models.Exchange{Method: req.Method, Path: req.URL.Path, Query: req.URL.RawQuery}
	body, err := requestBody(req, limit)
	if err != nil {
		return ex, nil, err
	}
	if v, ok := req.Header[models.IdempotencyKeyHeader]; ok && len(v) > 0 {
		// Several header lines are one comma-joined value (RFC 9110 §5.3).
		ex.HasKey, ex.KeyHeader = true, strings.Join(v, ", ")
		ex.Key, _, _ = models.ParseKey(v[0])
	}
	var cr models.ChargeRequest
	if len(body) > 0 && jsonread.Unmarshal(body, &cr) == nil {
		var contractOnly bool
		ex.Fingerprint, contractOnly = models.PayloadFingerprintOf(body, cr)
		// A charge's body with members of the client's own: a probe of
		// its key resends them (recorded.go).
		if !ex.IsRefund() && !contractOnly {
			ex.Extra = models.ExtraMembers(body, cr)
		}
		ex.MerchantReference, ex.Amount, ex.Currency = cr.MerchantReference, cr.Amount, cr.Currency
		ex.CardHash, ex.Card = models.CardHash(cr.Source), models.CardLabel(cr.Source)
		ex.Description = cr.Description
	}
	if ex.IsRefund() { // the refund's charge, for a report to rebuild its body
		var rr models.RefundRequest
		_ = jsonread.Unmarshal(body, &rr)
		ex.RefundCharge = rr.Charge
	}
	return ex, body, nil
}

// classify turns a transport error into a short, deterministic word for
// the history: "timeout" (a context deadline), "client gave up" (the client
// cancelled the try: its own attempt timeout, which failsafe-go signals as a
// plain cancellation, or a crash), or the injected fault's message.
func classify(ctx context.Context, err error) string {
	var inj *InjectedError
	switch {
	case errors.As(err, &inj):
		return inj.Msg
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, timeout.ErrExceeded),
		errors.Is(context.Cause(ctx), context.DeadlineExceeded), errors.Is(context.Cause(ctx), timeout.ErrExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "client gave up"
	default:
		return err.Error()
	}
}

// chargeID is the id in a 2xx charge body, the ids of a charge list
// (find-by-reference) joined by ",", or "".
func chargeID(status int, body []byte) string {
	if status < 200 || status > 299 {
		return ""
	}
	var c chargeAnswer
	if jsonread.Unmarshal(body, &c) != nil {
		return ""
	}
	return c.ids()
}

// chargeAnswer is a 2xx answer that names charges: one charge, or a
// lookup's list of them.
type chargeAnswer struct {
	models.Charge
	Data []models.Charge `json:"data"`
}

// ids are the charge ids a names, comma-separated.
func (a chargeAnswer) ids() string {
	if a.ID != "" || len(a.Data) == 0 {
		return a.ID
	}
	ids := make([]string, 0, len(a.Data))
	for _, d := range a.Data {
		ids = append(ids, d.ID)
	}
	return strings.Join(ids, ",")
}
