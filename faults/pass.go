package faults

import (
	"context"
	"net/http"
)

// KindPass lets the request through untouched.
const KindPass Kind = "pass"

func init() {
	register(KindPass, kind{
		describe: func(Fault) string { return "pass" },
		apply: func(_ context.Context, _ Fault, req *http.Request, forward forwardFunc) (*http.Response, error) {
			return forward(req)
		},
		forwards: true,
	})
}
