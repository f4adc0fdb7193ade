package faults

import (
	"context"
	"net/http"
)

// KindDelay holds the request for Fault.Delay before it reaches the
// provider (a slow network on the way in). If the client gives up first,
// the request never arrives.
const KindDelay Kind = "delay"

func init() {
	register(KindDelay, kind{
		describe: func(f Fault) string { return "delay " + f.Delay.String() },
		apply: func(ctx context.Context, f Fault, req *http.Request, forward forwardFunc) (*http.Response, error) {
			if !wait(ctx, f.Delay) {
				return nil, ctx.Err()
			}
			return forward(req)
		},
		forwards: true,
	})
}
