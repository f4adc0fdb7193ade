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
	// Guarded by mu: the requests counted in (arrived), and those in
	// BeforeCommit's processing delay or waiting for their turn to commit
	// (processing), which turn signals when one leaves (commitTurn).
	arrived    uint64
	processing []*reqState
	turn       *sync.Cond
}

type stateKey struct{}

// reqState follows one request through the provider.
type reqState struct {
	paused chan struct{} // closed when BeforeCommit starts the processing delay
	// committed is closed once the provider's goroutine has recorded its
	// answer (RoundTrip's goroutine path only).
	committed chan struct{}
	once      sync.Once
	delay     time.Duration
	in        *InProcess
	hang      *hangUp            // the client's scheduled hang-up, or nil
	client    context.Context    // the client's request context
	cancel    context.CancelFunc // cancels the provider's context
	arrival   uint64             // its place in the order of arrivals at the provider
	due       time.Time          // when its processing delay ends (commitTurn)
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
	st := &reqState{paused: make(chan struct{}), committed: make(chan struct{}), delay: p.Processing + ExtraProcessing(req.Context()), in: p}
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
	p.arrived++
	st.arrival = p.arrived
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
		resp := p.serve(id, preq)
		close(st.committed)
		if st.mayGiveUpNow() {
			time.Sleep(answerLag) // the client's timers due now first
		}
		finished <- resp
	}()
	select {
	case resp := <-finished:
		return respond(req, resp)
	case <-req.Context().Done():
	}
	// The client gave up; it sees so once the provider has started
	// processing, even when the answer came at the same instant
	// (answerLag), as before it the request may still be refused at once.
	if st.processed() {
		if !st.due.After(time.Now()) {
			// The commit falls due at this very instant: it is recorded
			// before the client's giving up, in every run, so the
			// history's event numbers do not depend on which of the two
			// synctest woke first.
			<-st.committed
		}
		return nil, req.Context().Err()
	}
	select {
	case resp := <-finished:
		return respond(req, resp)
	case <-st.paused:
		return nil, req.Context().Err()
	}
}

// processed reports whether the provider has started processing st's
// request (BeforeCommit).
func (st *reqState) processed() bool {
	select {
	case <-st.paused:
		return true
	default:
		return false
	}
}

// mayGiveUpNow reports whether the provider has processed st's request
// and its client still waits for the answer, with a timer that may fall
// due at this very instant (answerLag): its context deadline is now, or
// tryDeadlinePad from now.
func (st *reqState) mayGiveUpNow() bool {
	d, ok := st.client.Deadline()
	if !ok || !st.processed() || st.client.Err() != nil {
		return false
	}
	// Only a timer due at this very instant ties: the deadline itself, or
	// the reference client's timeouts, tryDeadlinePad before it. Lagging
	// an answer that comes earlier would move it onto a timer due
	// answerLag later, a tie it did not have.
	left := d.Sub(time.Now())
	return left == 0 || left == tryDeadlinePad
}

// tryDeadlinePad is client.TryDeadlinePad: the reference client's try
// deadline is its attempt (or total) timeout this much later
// (TestInProcess_TiePadIsTheReferenceClients holds the two equal).
const tryDeadlinePad = time.Second

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

// answerLag is how long after the provider commits a request it
// processed on a goroutine of its own the answer reaches a client that
// may give up at that instant (mayGiveUpNow), so that at an exact tie the
// client's timeout wins. On that path one of the client's timers can fall
// due at the very instant processing ends: the reference client's attempt
// timeout (failsafe-go's time.AfterFunc racing the try's return) when the
// processing delay, a slow-processing fault's included, equals it, or a
// context deadline. synctest does not order the goroutines it wakes at one
// instant, so one run recorded the answer in some bubbles and "client gave
// up" (and a retry) in others. synctest moves the clock on only once the
// bubble is idle, so an answer due a nanosecond later comes after every
// goroutine woken at the instant has run. If the client's timer ran first,
// the provider sees its context done and does not wait, but RoundTrip has
// already been woken by that and returns the error, as the provider has
// started processing (processed), whether or not the answer has come.
//
// Nothing else moves. The provider commits, and ProviderDoneAt and
// commitTurn's order are taken, at the instant processing ends, as before.
// An answer given at arrival (a 409, a replay, a 400; many reach a client
// on this path: a slow-processing fault on a request refused at once)
// comes at the instant the client's send chose. The inline path
// (answersInTime) is untouched: no client timer falls within inlineMargin
// of its answer. A client without a deadline, or one that gave up
// earlier, is not waited for, and an answer that comes before the
// client's timer, even by a nanosecond, is not held onto it. So only a
// processed answer due at the very instant of a client's timer has a
// DoneAt 1 ns later: TestConformance's per-step history digests of seeds
// 1-60 (300 sequences each) are the same as before. When the client gives
// up at the instant the commit falls due, RoundTrip waits for the commit
// to be recorded first (committed), so the history's event numbers do not
// depend on which goroutine synctest woke first. Only a bubble that ends
// at the tie itself must outlast the provider's goroutine, by answerLag.
const answerLag = time.Nanosecond

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
// time, and takes the provider lock back so the commit is recorded in order:
// requests whose processing ends at one instant commit in the order they
// arrived (commitTurn). A request that did not come through RoundTrip is
// not delayed.
func (p *InProcess) BeforeCommit(r *http.Request) {
	st, ok := r.Context().Value(stateKey{}).(*reqState)
	if !ok || st.in != p {
		return
	}
	st.once.Do(func() {
		st.due = time.Now().Add(st.delay) // the clock time.Sleep keeps; set before paused, which RoundTrip reads it after
		close(st.paused)
		p.processing = append(p.processing, st)
		p.mu.Unlock() // other requests come in while this one processes
		if st.hang != nil {
			context.AfterFunc(st.client, st.cancel) // the provider sees the hang-up
			st.hang.started()                       // the client hangs up now, while the provider processes
		}
		if st.delay > 0 {
			time.Sleep(st.delay) // the provider's own processing time (virtual in a bubble)
		}
		p.mu.Lock()
		p.commitTurn(st)
	})
}

// commitTurn, called holding p.mu once st's processing delay is over,
// waits until no request that arrived before st and whose delay ends no
// later is still in its delay or waiting here, then takes st off
// p.processing and returns, holding p.mu, for st to commit.
//
// Requests whose delays end at one virtual instant wake together, and
// synctest does not order the goroutines it wakes: without the wait they
// took p.mu, so got their ProviderSeq, in a different order from run to
// run (seed 10: a hung-up charge and the next step's refund, both
// finishing 50 ms after arriving at one instant). Now they commit in
// arrival order (ArrivalSeq); a request whose delay ends earlier still
// commits first, as it wakes first, and what the provider does is
// unchanged. Only requests in BeforeCommit's delay are waited for, and
// each of them comes back here: its sleep cannot be cancelled, so a
// hang-up or cancellation only changes its context, and a provider crash
// kills the process after BeforeCommit has returned. A request refused
// before BeforeCommit (a 409, a replay, a 400) is never listed. Each
// waits only for requests that arrived before it, so no two wait for each
// other; in real time (no bubble) the wait ends when the earlier
// request's sleep does, no later than this one's ended.
func (p *InProcess) commitTurn(st *reqState) {
	for p.earlierDue(st) {
		if p.turn == nil {
			p.turn = sync.NewCond(&p.mu)
		}
		p.turn.Wait() // durably blocked in a bubble, so virtual time still moves
	}
	for i, o := range p.processing {
		if o == st {
			p.processing = append(p.processing[:i], p.processing[i+1:]...)
			break
		}
	}
	if p.turn != nil {
		p.turn.Broadcast() // the next in line takes p.mu once st has committed
	}
}

// earlierDue reports whether p.processing holds a request that arrived
// before st and whose processing delay ends no later than st's.
func (p *InProcess) earlierDue(st *reqState) bool {
	for _, o := range p.processing {
		if o.arrival < st.arrival && !o.due.After(st.due) {
			return true
		}
	}
	return false
}
