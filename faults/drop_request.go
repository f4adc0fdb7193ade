package faults

import (
	"context"
	"net/http"
	"time"
)

// KindDropRequest loses the request on the way in: the provider never sees
// it and the client hears nothing until its own timeout. The wait is
// bounded by DropBound in case the client set no deadline.
const KindDropRequest Kind = "drop-request"

// DropBound is the longest a dropped request keeps the client waiting when
// its context has no deadline; default 5 minutes.
var DropBound = 5 * time.Minute

func init() {
	register(KindDropRequest, kind{
		describe: func(Fault) string { return "drop-request" },
		apply: func(ctx context.Context, _ Fault, _ *http.Request, _ forwardFunc) (*http.Response, error) {
			if wait(ctx, DropBound) {
				return nil, &InjectedError{Kind: KindDropRequest, Msg: "no response: request lost in transit"}
			}
			return nil, ctx.Err()
		},
	})
}
