package faults

import (
	"context"
	"net/http"
	"time"
)

// KindProviderRestart restarts a provider in another process through its
// restart hook (Lifecycle.Restart: --hook-restart, then the readiness
// wait). The request it is drawn for is sent; with a Delay the provider
// is restarted that long after the request left, while a create is in
// flight (its key taken, nothing committed), else once its answer came
// back, between a create and its retry. Either way the client sees its
// connection reset and retries after the restart: the key must not stay
// 409 beyond the profile's lease, and a completed key must be replayed,
// never charged again. Drawn only against a URL with a restart hook
// (LifecycleScheduleGen); without a Transport.Lifecycle it passes.
const KindProviderRestart Kind = "provider-restart"

// restartAfter is the Delay drawn for a restart in flight, before the
// run's time scale: a third of it (100 ms) at the default remote scale,
// inside a create the provider processes for longer than that.
var restartAfter = []time.Duration{0, 300*time.Millisecond + delayOffset}

func init() {
	register(KindProviderRestart, kind{
		describe: func(f Fault) string {
			if f.Delay > 0 {
				return "provider-restart " + f.Delay.String() + " into the request"
			}
			return "provider-restart after the answer"
		},
		apply: func(ctx context.Context, f Fault, req *http.Request, forward forwardFunc) (*http.Response, error) {
			t := lifecycleFrom(ctx)
			if t == nil || t.Lifecycle == nil {
				return forward(req)
			}
			type result struct {
				resp *http.Response
				err  error
			}
			done := make(chan result, 1)
			go func() {
				resp, err := forward(req)
				done <- result{resp, err}
			}()
			var r *result
			if f.Delay > 0 {
				if !wait(ctx, f.Delay) {
					return nil, ctx.Err() // the client gave up first: the restart never came
				}
			} else {
				got := <-done
				r = &got
			}
			herr := t.Lifecycle.Restart(context.WithoutCancel(ctx))
			if r == nil {
				got := <-done
				r = &got
			}
			if r.resp != nil {
				_ = r.resp.Body.Close()
			}
			msg := "connection reset by peer: the provider restarted"
			if herr != nil {
				msg += " (" + herr.Error() + ")"
			}
			return nil, &InjectedError{Kind: KindProviderRestart, Msg: msg}
		},
		forwards: true,
	})
}
