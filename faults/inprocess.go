package faults

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

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
}

func (p *InProcess) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// RoundTrip hands req to the provider and returns its response, or the
// client context's error if the client gives up first.
func (p *InProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	st := &reqState{paused: make(chan struct{}), delay: p.Processing + ExtraProcessing(req.Context()), in: p}
	// The provider must not see the client's cancellation, only its values,
	// except when the client hangs up (KindHangUp) while it processes:
	// then its context is cancelled with the client's once processing has
	// started (a hang-up before that is a client that gave up early).
	hang := hangUpFrom(req.Context())
	pbase, pcancel := context.WithCancel(context.WithoutCancel(req.Context()))
	pctx := context.WithValue(pbase, stateKey{}, st)
	preq := req.Clone(pctx)
	id := exchangeFrom(req.Context())

	finished := make(chan *http.Response, 1)
	p.mu.Lock()
	p.record(id, func(e *models.Exchange, seq int) { e.ArrivalSeq, e.ArrivedAt = seq, p.now() })
	go func() {
		defer pcancel()
		rec := httptest.NewRecorder()
		p.Handler.ServeHTTP(rec, preq)
		resp := rec.Result()
		body := rec.Body.Bytes()
		p.record(id, func(e *models.Exchange, seq int) {
			e.ProviderDone, e.ProviderSeq, e.ProviderDoneAt = true, seq, p.now()
			e.ProviderStatus = resp.StatusCode
			e.ProviderBodyDigest = models.BodyDigest(body)
			e.ProviderHeaders = models.HeadersOf(resp.Header, "")
			e.ProviderChargeID = chargeIDIn(p.Dialect, resp.StatusCode, body)
			e.ProviderForeign = !models.OfDialect(*e, resp.StatusCode, body)
		})
		p.mu.Unlock() // held since arrival, or retaken by BeforeCommit
		finished <- resp
	}()
	select {
	case <-st.paused:
		p.mu.Unlock() // the handler retakes it in BeforeCommit
		if hang != nil {
			context.AfterFunc(req.Context(), pcancel) // the provider sees the hang-up
			hang.started()                            // the client hangs up now, while the provider processes
		}
	case resp := <-finished:
		return respond(req, resp)
	}
	select {
	case resp := <-finished:
		return respond(req, resp)
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
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
		if st.delay > 0 {
			time.Sleep(st.delay) // the provider's own processing time (virtual in a bubble)
		}
		p.mu.Lock()
	})
}
