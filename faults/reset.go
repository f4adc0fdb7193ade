package faults

import (
	"context"
	"net/http"
)

// KindReset resets the connection before the request reaches the
// provider. The client cannot tell this from a reset after processing, so
// for it the outcome is unknown.
const KindReset Kind = "reset"

func init() {
	register(KindReset, kind{
		describe: func(Fault) string { return "reset" },
		apply: func(context.Context, Fault, *http.Request, forwardFunc) (*http.Response, error) {
			return nil, &InjectedError{Kind: KindReset, Msg: "connection reset by peer"}
		},
	})
}
