package faults

import (
	"context"
	"net/http"
)

// NativeFaults is an optional capability of the wire behind a Transport
// (found by type assertion, like toxiproxy's BufferedToxic): a wire that
// can make some kinds of fault itself. WireMock, for instance, resets the
// connection, sends an empty response or garbage, and delays its answer
// natively, so those faults happen on a real socket instead of in our
// RoundTripper.
//
// For a kind the wire handles natively, Transport forwards the request
// unchanged with the fault in its context (FaultFrom) and records what came
// back; the wire must apply the fault. Other kinds Transport applies itself.
type NativeFaults interface {
	http.RoundTripper
	// Native reports whether the wire applies faults of kind k itself.
	Native(k Kind) bool
}

type faultKey struct{}

// FaultFrom returns the fault a Transport asked a NativeFaults wire to
// apply to the request carrying ctx, and whether there is one.
func FaultFrom(ctx context.Context) (Fault, bool) {
	f, ok := ctx.Value(faultKey{}).(Fault)
	return f, ok
}

// nativeApply forwards req with f in its context: the wire applies f.
func nativeApply(ctx context.Context, f Fault, req *http.Request, forward forwardFunc) (*http.Response, error) {
	return forward(req.WithContext(context.WithValue(ctx, faultKey{}, f)))
}

// ExchangeID is the id of the models.Exchange a Transport recorded for the
// request carrying ctx, or 0 when it did not come through a Transport. A
// wire can send it on (a header) to match its own log to the history.
func ExchangeID(ctx context.Context) int { return exchangeFrom(ctx) }
