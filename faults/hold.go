package faults

import (
	"context"
	"net/http"
	"time"
)

// KindHold holds the request until another request arrives at the same
// Transport that is not itself held — "hold request A until request B
// arrives" — and then forwards it, so that A and B reach the provider
// together: a forced interleaving that replays, rather than one left to
// the scheduler. A schedule [hold, hold, pass] releases three concurrent
// requests at once. If no such request arrives within Fault.Delay
// (HoldBound when 0), A is forwarded alone. Gen never draws it: the
// harness places it.
const KindHold Kind = "hold"

// HoldBound is how long a held request waits for its partner when
// Fault.Delay is 0; default 10 s.
var HoldBound = 10 * time.Second

type holdKey struct{}

func init() {
	register(KindHold, kind{
		describe: func(f Fault) string {
			if f.Delay > 0 {
				return "hold (up to " + f.Delay.String() + ")"
			}
			return "hold"
		},
		apply: func(ctx context.Context, f Fault, req *http.Request, forward forwardFunc) (*http.Response, error) {
			bound := f.Delay
			if bound <= 0 {
				bound = HoldBound
			}
			wake, _ := ctx.Value(holdKey{}).(<-chan struct{})
			t := time.NewTimer(bound)
			defer t.Stop()
			select {
			case <-wake:
			case <-t.C:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return forward(req)
		},
		forwards: true,
	})
}
