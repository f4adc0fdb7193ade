package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/models"
)

// RemoteWire is the wire to a provider in another process: it sends
// through Next and records in History when each forwarded request left for
// the provider (its arrival) and the provider's answer — status, body
// digest, charge id — even when the client never sees it (lose-response).
// Unlike InProcess it cannot see the provider's decisions, only this
// interval around them. It is safe for concurrent use.
type RemoteWire struct {
	Next    http.RoundTripper
	History *models.History
	// Now is the clock; default time.Now.
	Now func() time.Time
	// ReplayHeader names the response header that marks a replay, recorded
	// in Exchange.ProviderHeaders.Replay; "" for Idempotent-Replayed.
	ReplayHeader string
	// MaxBody caps the answer's body, in bytes; 0 means DefaultMaxBody
	// (1 MiB). A longer answer is an *OversizeError, recorded as the
	// exchange's error.
	MaxBody int64
}

func (w *RemoteWire) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

// RoundTrip forwards req and records the provider's answer.
func (w *RemoteWire) RoundTrip(req *http.Request) (*http.Response, error) {
	id := exchangeFrom(req.Context())
	w.record(id, func(e *models.Exchange, seq int) { e.ArrivalSeq, e.ArrivedAt = seq, w.now() })
	resp, err := w.Next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := ReadBody(resp.Body, w.MaxBody)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	w.record(id, func(e *models.Exchange, seq int) {
		e.ProviderDone, e.ProviderSeq, e.ProviderDoneAt = true, seq, w.now()
		e.ProviderStatus = resp.StatusCode
		e.ProviderBodyDigest = models.BodyDigest(body)
		e.ProviderHeaders = models.HeadersOf(resp.Header, w.ReplayHeader)
		e.ProviderChargeID = chargeID(resp.StatusCode, body)
		e.ProviderForeign = !models.OfDialect(*e, resp.StatusCode, body)
	})
	return resp, nil
}

func (w *RemoteWire) record(id int, f func(*models.Exchange, int)) {
	if id != 0 && w.History != nil {
		w.History.UpdateExchange(id, f)
	}
}

// Proxy is a reverse proxy on 127.0.0.1 (a free port) in front of an
// out-of-process provider. It applies a fault schedule to the real traffic
// through it, as Transport does in process, and records every exchange:
// drop the request (the client waits until it gives up, then the
// connection is cut), forward it and lose the response (the connection is
// cut after the provider answered), delay, reset (cut without
// forwarding), 429 / 5xx / 400 / 422 answered without forwarding, and hold
// A until B arrives. slow-processing is forwarded as pass: a remote
// provider's processing time is its own.
//
// Clients should not reuse connections through it (DisableKeepAlives):
// net/http silently resends a request carrying an Idempotency-Key when a
// reused connection is cut, which would hide the fault.
//
// The embedded Transport sets the schedule (Schedule, Heal, Injected). A
// request the upstream cannot be reached for (including one refused by a
// budget, or an answer over the body cap) is answered 502 with the error as
// problem detail and the WireErrorHeader, so a client tells the proxy's
// own 502 from the provider's. It is safe for concurrent use.
type Proxy struct {
	*Transport
	// URL is where clients send requests: "http://127.0.0.1:PORT".
	URL string

	upstream *url.URL
	watch    func(*http.Request)
	srv      *http.Server
	end      chan error
}

// NewProxy starts a proxy to the provider at upstream (an http(s) base
// URL), sending through next (http.DefaultTransport when nil), recording in
// history and applying schedule; maxBody caps each body it reads, in bytes
// (0: DefaultMaxBody, 1 MiB). Close it when done.
func NewProxy(upstream string, next http.RoundTripper, history *models.History, schedule []Fault, maxBody int64) (*Proxy, error) {
	if next == nil {
		next = http.DefaultTransport
	}
	t := NewTransport(&RemoteWire{Next: next, History: history, MaxBody: maxBody}, history, schedule)
	t.MaxBody = maxBody
	return ServeTransport(t, upstream, nil)
}

// ServeTransport starts a Proxy on 127.0.0.1 (a free port) whose requests
// go through t — an in-process Transport in front of the embedded
// provider, say, so that a client in another process meets the same fault
// schedule and the same recorded provider decisions — with request paths
// joined to upstream's. watch, when not nil, is shown each request as the
// client sent it, before the proxy forwards it (its Authorization, say:
// whose account the client's keys are in); it must not keep the request
// or read its body. Close it when done.
func ServeTransport(t *Transport, upstream string, watch func(*http.Request)) (*Proxy, error) {
	u, err := url.Parse(upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("faults: proxy upstream must be an http(s) URL")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{
		Transport: t,
		URL:       "http://" + ln.Addr().String(),
		upstream:  u,
		watch:     watch,
		end:       make(chan error, 1),
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go func() { p.end <- p.srv.Serve(ln) }()
	return p, nil
}

// hopHeaders are not forwarded (RFC 9110 §7.6.1).
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// WireErrorHeader marks the Proxy's own 502: the request was not sent
// (WireNotSent: a budget or the provider's Retry-After refused it) or
// failed on the way (WireFailed: connection refused, timeout, an answer
// over the body cap); the problem body's detail says why.
const WireErrorHeader = "Idemcheck-Wire-Error"

// The values of WireErrorHeader.
const (
	WireNotSent = "not-sent"
	WireFailed  = "failed"
)

// OpHeader, on a request to the Proxy, names the client operation it
// belongs to (a decimal id): the proxy records it as Exchange.OpID, as
// models.WithOp does in process, and does not forward the header.
const OpHeader = "Idemcheck-Op"

// ServeHTTP forwards one request through the fault schedule.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p.watch != nil {
		p.watch(r)
	}
	ctx := r.Context()
	if op, err := strconv.Atoi(r.Header.Get(OpHeader)); err == nil {
		ctx = models.WithOp(ctx, op)
	}
	out := r.Clone(ctx)
	out.Header.Del(OpHeader)
	u := *p.upstream
	u.Path = strings.TrimRight(p.upstream.Path, "/") + r.URL.Path
	u.RawPath, u.RawQuery = "", r.URL.RawQuery
	out.URL, out.Host, out.RequestURI = &u, "", ""
	for _, h := range hopHeaders {
		out.Header.Del(h)
	}
	resp, err := p.Transport.RoundTrip(out)
	if err != nil {
		var inj *InjectedError
		if errors.As(err, &inj) || r.Context().Err() != nil {
			panic(http.ErrAbortHandler) // cut the connection: the client sees a reset
		}
		b, _ := json.Marshal(models.Problem{Title: "Bad Gateway (idemcheck proxy)", Status: http.StatusBadGateway, Detail: err.Error()})
		w.Header().Set("Content-Type", "application/problem+json")
		kind := WireFailed
		var ns NotSent
		if errors.As(err, &ns) && ns.NotSent() {
			kind = WireNotSent
		}
		w.Header().Set(WireErrorHeader, kind)
		w.WriteHeader(http.StatusBadGateway)
		_, _ = w.Write(b)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		w.Header()[k] = append([]string(nil), vs...)
	}
	for _, h := range hopHeaders {
		w.Header().Del(h)
	}
	w.Header().Del("Content-Length")
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// Close stops the proxy: it waits up to 5 s for requests in flight, then
// cuts the rest.
func (p *Proxy) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := p.srv.Shutdown(ctx)
	if err != nil {
		err = p.srv.Close()
	}
	<-p.end
	return err
}
