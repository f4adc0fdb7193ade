package faults

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// KindHangUp forwards the request and has the client give up on it while
// the provider is still processing: the provider's request context is
// cancelled (in process, InProcess lets this request's cancellation through
// once the provider starts processing; through a Proxy, the upstream
// connection is closed Fault.Delay after the request left, HangUpAfter when
// 0). The client sees a transport error, so its outcome is unknown. A
// provider must keep processing and store the response regardless
// (draft-ietf-httpapi-idempotency-key-header §2.6: a retry of a request
// that was processed gets the stored response); one that frees the key, or
// skips storing, when the connection drops charges the retry again. An
// answer that comes back before the hang-up is lost, as with lose-response.
const KindHangUp Kind = "hang-up"

// HangUpAfter is how long after sending a hang-up request the client gives
// up when Fault.Delay is 0 and the wire cannot tell when processing starts
// (a remote provider); default 100 ms.
var HangUpAfter = 100 * time.Millisecond

type hangUpKey struct{}

// hangUp follows one hang-up request: processing is closed when the
// in-process provider starts processing it.
type hangUp struct {
	once       sync.Once
	processing chan struct{}
}

// started signals that the provider is processing the request.
func (h *hangUp) started() { h.once.Do(func() { close(h.processing) }) }

// hangUpFrom returns the hang-up state of the request behind ctx, or nil.
func hangUpFrom(ctx context.Context) *hangUp {
	h, _ := ctx.Value(hangUpKey{}).(*hangUp)
	return h
}

// answer is what forward returned.
type answer struct {
	resp *http.Response
	err  error
}

func (a answer) close() {
	if a.err == nil && a.resp != nil {
		_ = a.resp.Body.Close()
	}
}

func init() {
	register(KindHangUp, kind{
		describe: func(f Fault) string {
			if f.Delay > 0 {
				return "hang-up (after " + f.Delay.String() + ")"
			}
			return "hang-up"
		},
		apply:    applyHangUp,
		forwards: true,
	})
}

// applyHangUp forwards req on a context of its own and cancels it once the
// provider processes the request (in process) or after the delay.
func applyHangUp(ctx context.Context, f Fault, req *http.Request, forward forwardFunc) (*http.Response, error) {
	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	h := &hangUp{processing: make(chan struct{})}
	done := make(chan answer, 1)
	go func() {
		resp, err := forward(req.WithContext(context.WithValue(hctx, hangUpKey{}, h)))
		done <- answer{resp, err}
	}()
	bound := f.Delay
	if bound <= 0 {
		bound = HangUpAfter
	}
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case <-h.processing:
	case <-t.C:
	case a := <-done:
		a.close()
		if a.err != nil {
			return nil, a.err
		}
		return nil, &InjectedError{Kind: KindHangUp, Msg: "the client hung up before the answer arrived"}
	case <-ctx.Done():
	}
	cancel()
	(<-done).close()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return nil, &InjectedError{Kind: KindHangUp, Msg: "the client hung up while the provider was processing"}
}
