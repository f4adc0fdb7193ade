package client

import (
	"context"
	"net/http"
)

// Point is a moment of a checkout or of a reconciliation run at which
// Config.At is called: a crash point. The harness kills the client there
// (Client.Crash) and restarts it from its store, to check that the
// attempt and its key survive every one (issue "Real stores", item 4).
type Point string

// The crash points, in the order a checkout passes them.
const (
	// PointBeforeStore: the order is read, no attempt is stored yet.
	PointBeforeStore Point = "before-store"
	// PointBeforeSend: the attempt and its key are stored (and the order
	// PaymentPending), nothing is sent yet.
	PointBeforeSend Point = "before-send"
	// PointRequestOut: a POST has reached the provider, which answered;
	// the client has not read the answer yet. Called for every try.
	PointRequestOut Point = "request-out"
	// PointBeforeStatus: the response is read, the attempt's new status is
	// not written yet.
	PointBeforeStatus Point = "before-status"
	// PointBeforeSettle: reconciliation has the provider's answer for an
	// attempt and is about to write what it decided (succeed, abandon, or
	// nothing); called once per attempt it checks.
	PointBeforeSettle Point = "before-settle"
)

// CheckoutPoints are the crash points of one checkout, in the order it
// passes them.
var CheckoutPoints = []Point{PointBeforeStore, PointBeforeSend, PointRequestOut, PointBeforeStatus}

// pointTransport calls Config.At(PointRequestOut) after each POST's try
// came back from the wire, before the client reads it.
type pointTransport struct {
	next http.RoundTripper
	at   func(context.Context, Point)
}

func (p pointTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := p.next.RoundTrip(req)
	if req.Method == http.MethodPost {
		p.at(req.Context(), PointRequestOut)
	}
	return resp, err
}
