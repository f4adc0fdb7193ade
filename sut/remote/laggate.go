package remote

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// LagGate is the wire to a URL whose profile publishes a lookup lag
// (Profile.LookupLag): it notes each create (POST) it forwards, and Wait
// lets the lag pass, in real time, after them before a lookup by
// reference is read as the provider's truth. The conformance property
// waits before a reconciliation and before it reads the provider's
// charges; the certification before each lookup. Without the wait an
// empty lookup that is only late reads as "no charge": the reference
// client abandons a charged attempt, and a requirement counts a charge
// missing (false alarms on books-balance and "lookup found 0 charges").
type LagGate struct {
	next http.RoundTripper
	lag  time.Duration

	mu      sync.Mutex // guards created
	created bool       // a create was forwarded since the last Wait
}

// NewLagGate is a LagGate of lag in front of next.
func NewLagGate(next http.RoundTripper, lag time.Duration) *LagGate {
	return &LagGate{next: next, lag: lag}
}

// RoundTrip forwards req to the next wire, noting a create.
func (g *LagGate) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost {
		g.mu.Lock()
		g.created = true
		g.mu.Unlock()
	}
	return g.next.RoundTrip(req)
}

// Wait lets the lag pass when a create was forwarded since the last Wait,
// else returns at once; ctx's error if it ends first. The caller has let
// the provider answer every request in flight, so each of those charges
// is at least the lag old when Wait returns nil. A create sent while it
// waits is waited for by the next call.
func (g *LagGate) Wait(ctx context.Context) error {
	g.mu.Lock()
	created := g.created
	g.created = false
	g.mu.Unlock()
	if !created {
		return nil
	}
	t := time.NewTimer(g.lag)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
