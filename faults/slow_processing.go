package faults

import (
	"context"
	"net/http"
	"time"
)

// KindSlowProcessing forwards the request and makes the provider take
// Fault.Delay longer than usual to process it (the seed article's 5 s and
// 15 s providers). The provider keeps working after the client gives up.
const KindSlowProcessing Kind = "slow-processing"

type slowKey struct{}

func init() {
	register(KindSlowProcessing, kind{
		describe: func(f Fault) string { return "slow-processing " + f.Delay.String() },
		apply:    forwardSlowly,
		forwards: true,
	})
}

// forwardSlowly forwards req with f.Delay of extra processing
// (ExtraProcessing): slow processing and its macros.
func forwardSlowly(ctx context.Context, f Fault, req *http.Request, forward forwardFunc) (*http.Response, error) {
	return forward(req.WithContext(context.WithValue(ctx, slowKey{}, f.Delay)))
}

// ExtraProcessing is the processing delay a slow-processing fault asked for
// on the request behind ctx, or 0.
func ExtraProcessing(ctx context.Context) time.Duration {
	d, _ := ctx.Value(slowKey{}).(time.Duration)
	return d
}
