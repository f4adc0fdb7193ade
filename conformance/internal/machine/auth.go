package machine

import (
	"net/http"
	"sync"
)

// ClientAPIKey is checkout.Env.APIKey of a Go client under test against
// the embedded provider: the credential it is given to authenticate
// with, as an SDK's secret key.
const ClientAPIKey = "sk_test_idemcheck_merchant_a"

// clientAuth is the Authorization header the client under test last sent
// — a Go client through its transport (authWatch), a service through the
// fault proxy (openUnderTest) — so that the harness's probes of its keys go in the client's own
// account (the embedded provider scopes keys per credential:
// provider.AccountScope). It is held in memory only, never recorded in
// the history or a report. It is safe for concurrent use.
type clientAuth struct {
	mu     sync.Mutex // guards header, seen
	header string
	seen   bool
}

// note records the Authorization header of a request the client sent.
func (a *clientAuth) note(header string) {
	a.mu.Lock()
	a.header, a.seen = header, true
	a.mu.Unlock()
}

// last is the Authorization header the client last sent ("" for none),
// and whether it has sent any request.
func (a *clientAuth) last() (string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.header, a.seen
}

// authWatch is a Go client under test's transport: it notes each
// request's Authorization in auth and sends the request on.
type authWatch struct {
	next http.RoundTripper
	auth *clientAuth
}

func (t authWatch) RoundTrip(r *http.Request) (*http.Response, error) {
	t.auth.note(r.Header.Get("Authorization"))
	return t.next.RoundTrip(r)
}

// probeAuthorization is the Authorization header of the harness's own
// probe of a client's key: the client's, as it sent it (none when it
// sent none); before the client sent anything, or for the reference
// client, its configured API key.
func (w *World) probeAuthorization() string {
	if h, ok := w.auth.last(); ok {
		return h
	}
	if w.ccfg.APIKey != "" {
		return "Bearer " + w.ccfg.APIKey
	}
	return ""
}
