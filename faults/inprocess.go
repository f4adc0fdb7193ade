package faults

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/idemcheck/idemcheck/internal/jsonread"
	"github.com/idemcheck/idemcheck/internal/stackgrow"
	"github.com/idemcheck/idemcheck/models"
)

// InProcess is the wire to a provider that is an http.Handler in this
// process. Requests never touch a socket. The provider keeps processing a
// request after the client gave up on it (as a real one does), and the
// provider's decisions are serialised with the history: each arrival, and
// each commit after the processing delay, is recorded while holding one
// lock, so the history orders them exactly as the provider saw them and the
// specification in models can replay that order.
//
// Wire the provider's processing-delay hook to BeforeCommit. It is safe for
// concurrent use.
type InProcess struct {
	Handler http.Handler
	History *models.History
	// Processing is the provider's base processing time, added to any
	// slow-processing fault; default 0. A non-zero base keeps concurrent
	// requests apart in virtual time.
	Processing time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Dialect is the API Handler serves when it is not
	// docs/provider-api.md (nil): its answers' charge ids are read in it.
	Dialect Dialect

	mu sync.Mutex // serialises provider decisions with their history records
}

type stateKey struct{}

// reqState follows one request through the provider.
type reqState struct {
	paused chan struct{} // closed when BeforeCommit starts the processing delay
	once   sync.Once
	delay  time.Duration
	in     *InProcess
	hang   *hangUp            // the client's scheduled hang-up, or nil
	client context.Context    // the client's request context
	cancel context.CancelFunc // cancels the provider's context
}

func (p *InProcess) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// RoundTrip hands req to the provider and returns its response, or the
// client context's error if the client gives up first.
//
// When the client cannot give up before the provider has answered (its
// context's deadline is after the processing delay, and no hang-up is
// scheduled), the handler runs on the caller's goroutine: no goroutine
// and no hand-off per exchange (issue 29). Otherwise it runs on a
// goroutine of its own, which outlives the client's wait.
func (p *InProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	st := &reqState{paused: make(chan struct{}), delay: p.Processing + ExtraProcessing(req.Context()), in: p}
	// The provider must not see the client's cancellation, only its values,
	// except when the client hangs up (KindHangUp) while it processes:
	// then its context is cancelled with the client's once processing has
	// started (a hang-up before that is a client that gave up early).
	st.hang = hangUpFrom(req.Context())
	pbase, pcancel := context.WithCancel(context.WithoutCancel(req.Context()))
	st.client, st.cancel = req.Context(), pcancel
	pctx := context.WithValue(pbase, stateKey{}, st)
	// A shallow copy: neither a RoundTripper nor a handler may change the
	// request (net/http's contracts), so its header map is shared, not
	// cloned per exchange (issue 29).
	preq := req.WithContext(pctx)
	id := exchangeFrom(req.Context())

	p.mu.Lock()
	p.record(id, func(e *models.Exchange, seq int) { e.ArrivalSeq, e.ArrivedAt = seq, p.now() })
	if st.answersInTime() {
		resp := p.serve(id, preq)
		pcancel()
		if err := req.Context().Err(); err != nil { // cancelled, not by its deadline
			_ = resp.Body.Close()
			return nil, err
		}
		return respond(req, resp)
	}
	finished := make(chan *http.Response, 1)
	go func() {
		stackgrow.To(stackgrow.Exchange)
		defer pcancel()
		finished <- p.serve(id, preq)
	}()
	select {
	case resp := <-finished:
		return respond(req, resp)
	case <-req.Context().Done():
	}
	// The client gave up; it sees so once the provider has started
	// processing, as before it the request may still be refused at once.
	select {
	case resp := <-finished:
		return respond(req, resp)
	case <-st.paused:
		return nil, req.Context().Err()
	}
}

// answersInTime is whether the client's context has a deadline at least
// inlineMargin later than the processing delay from now (on the wall
// clock, virtual in a bubble, as the deadline is) and no hang-up is
// scheduled.
func (st *reqState) answersInTime() bool {
	d, ok := st.client.Deadline()
	return ok && st.hang == nil && time.Now().Add(st.delay+inlineMargin).Before(d)
}

// inlineMargin keeps a provider run inline clear of a client timeout
// that falls at or near the instant its processing ends: the reference
// client's try deadlines are 1 s past its real timeouts
// (client.TryDeadlinePad), plus a millisecond.
const inlineMargin = time.Second + time.Millisecond

// serve runs the handler on preq and records its answer. It is called
// holding p.mu, which BeforeCommit lets go of while the provider
// processes, and lets go of it.
func (p *InProcess) serve(id int, preq *http.Request) *http.Response {
	rec := newRecorder()
	p.Handler.ServeHTTP(rec, preq)
	resp, body := rec.result()
	p.record(id, func(e *models.Exchange, seq int) {
		e.ProviderDone, e.ProviderSeq, e.ProviderDoneAt = true, seq, p.now()
		e.ProviderStatus = resp.StatusCode
		e.ProviderBodyDigest = models.BodyDigest(body)
		e.ProviderHeaders = models.HeadersOf(resp.Header, "")
		e.ProviderChargeID, e.ProviderForeign = p.answered(e, resp.StatusCode, body)
	})
	p.mu.Unlock() // held since arrival, or retaken by BeforeCommit
	return resp
}

// answered is the charge id an answer names (chargeIDIn) and whether it
// is foreign to the dialect (models.OfDialect). A reference create's 2xx
// answer is decoded once for both (issue 29); anything else each way.
func (p *InProcess) answered(e *models.Exchange, status int, body []byte) (string, bool) {
	if p.Dialect == nil && e.IsPost() && status >= 200 && status <= 299 {
		var c chargeAnswer
		if jsonread.Unmarshal(body, &c) == nil { // then a models.Charge decodes too
			return c.ids(), c.ID == ""
		}
	}
	return chargeIDIn(p.Dialect, status, body), !models.OfDialect(*e, status, body)
}

func respond(req *http.Request, resp *http.Response) (*http.Response, error) {
	resp.Request = req
	return resp, nil
}

func (p *InProcess) record(id int, f func(*models.Exchange, int)) {
	if id != 0 && p.History != nil {
		p.History.UpdateExchange(id, f)
	}
}

// BeforeCommit is the provider's processing-delay hook: the provider calls
// it once it has decided to process r (its key marked in flight) and before
// it commits the result. It lets other requests in, waits the processing
// time, and takes the provider lock back so the commit is recorded in order.
// A request that did not come through RoundTrip is not delayed.
func (p *InProcess) BeforeCommit(r *http.Request) {
	st, ok := r.Context().Value(stateKey{}).(*reqState)
	if !ok || st.in != p {
		return
	}
	st.once.Do(func() {
		close(st.paused)
		p.mu.Unlock() // other requests come in while this one processes
		if st.hang != nil {
			context.AfterFunc(st.client, st.cancel) // the provider sees the hang-up
			st.hang.started()                       // the client hangs up now, while the provider processes
		}
		if st.delay > 0 {
			time.Sleep(st.delay) // the provider's own processing time (virtual in a bubble)
		}
		p.mu.Lock()
	})
}
