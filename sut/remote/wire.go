package remote

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/reports"
)

// wire is what every request to the provider leaves through, under the
// dialects: one connection per request, HTTP/1.1 only, so net/http never
// resends a request on a kept-alive connection the provider closed (it
// retries a GET, or a POST carrying an Idempotency-Key, behind the meter's
// back); redirects are answers, never hops; a 1xx final answer or a
// content coding it cannot decode is an error; gzip is decoded by the
// transport (a client's Accept-Encoding is dropped); every answer is read whole
// before it is returned, at most maxBody bytes (a longer one is an
// *faults.OversizeError), with the API keys scrubbed (reports.Scrubber:
// escaped and base64-encoded forms too) from its status line, headers and
// body; and a Retry-After on a 429 or 5xx holds the meter.
type wire struct {
	next    http.RoundTripper
	maxBody int64
	meter   *Meter
	scrub   *reports.Scrubber
}

// newWire is the provider's wire for cfg's keys and body cap.
func newWire(cfg Config, meter *Meter) *wire {
	t := &http.Transport{
		Proxy:                  http.ProxyFromEnvironment, // as before; loopback is never proxied
		DialContext:            (&net.Dialer{Timeout: 30 * time.Second}).DialContext,
		DisableKeepAlives:      true,
		ForceAttemptHTTP2:      false,
		TLSNextProto:           map[string]func(string, *tls.Conn) http.RoundTripper{}, // no HTTP/2: its transport retries too
		TLSHandshakeTimeout:    10 * time.Second,
		ResponseHeaderTimeout:  60 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
		// How long a body over expectContinueOver waits for the
		// provider's 100 Continue before it is sent anyway (a provider
		// that ignores Expect costs that once per such request).
		ExpectContinueTimeout: time.Second,
	}
	return &wire{next: t, maxBody: cfg.Limits.MaxBody, meter: meter, scrub: reports.NewScrubber(cfg.APIKey.Reveal(), RedactedKey, cfg.SecondAPIKey.Reveal(), RedactedKey2)}
}

// Redacted markers a scrubbed key is replaced with: the first and the
// second account's key stay told apart.
const (
	RedactedKey  = "[redacted]"
	RedactedKey2 = "[redacted 2]"
)

// expectContinueOver is the body length over which a request asks the
// provider first (Expect: 100-continue, RFC 9110 §10.1.1) and sends the
// body only once it is told to: 64 KiB. A provider that refuses a long
// body at once (413 from its headers, as a proxy with a body limit does)
// and closes the connection would otherwise meet a body still being
// written, and the kernel's reset could reach the harness before the 413:
// certify's body-over-limit-refused read INCONCLUSIVE where the answer
// was there to judge. A provider that answers the expectation 417 gets
// the request again without it.
const expectContinueOver = 64 << 10

func (w *wire) RoundTrip(req *http.Request) (*http.Response, error) {
	encoding := req.Header.Get("Accept-Encoding") != ""
	expect := req.ContentLength > expectContinueOver && req.Header.Get("Expect") == ""
	if encoding || expect {
		req = req.Clone(req.Context())
	}
	if encoding {
		// A client's Accept-Encoding (the certify proxy forwards its
		// own) would make the transport hand gzip through undecoded:
		// the cap and the scrubber would see compressed bytes. Without
		// it the transport asks for gzip itself and decodes it.
		req.Header.Del("Accept-Encoding")
	}
	var sent []byte        // a body sent under Expect, kept to send again
	var first *watchedBody // what the transport did with it
	if expect {
		req.Header.Set("Expect", "100-continue")
		var err error
		if sent, err = faults.ReadBody(req.Body, max(w.maxBody, req.ContentLength)); err != nil {
			return nil, w.failure(req.Context(), err)
		}
		first = newWatchedBody(sent)
		req.Body = first
	}
	resp, err := w.next.RoundTrip(req)
	if err == nil && expect && resp.StatusCode == http.StatusExpectationFailed {
		// RFC 9110 §10.1.1: a 417 to the expectation is answered by the
		// same request without it. The resend is one more request of the
		// budget, and not sent when none is left (nor before a
		// Retry-After the provider asked for has passed). When the body
		// went out before the 417 (the provider said 100 Continue and
		// read it, or ExpectContinueTimeout passed first, or the 417 kept
		// the connection and net/http sent the body to keep it in step),
		// the provider received the whole create: the resend is a second
		// create of the charges budget, and a refusal to send it is no
		// request "never sent".
		_ = resp.Body.Close()
		bodySent := first.sent(req.Context())
		if err := w.meter.Wait(req.Context()); err != nil {
			if !errors.Is(err, ErrBudget) {
				err = w.failure(req.Context(), err) // the run's deadline or interrupt ended the wait
			}
			return nil, resendRefused(err, bodySent)
		}
		if err := w.meter.takeResend(bodySent); err != nil {
			return nil, resendRefused(err, bodySent)
		}
		req = req.Clone(req.Context())
		req.Header.Del("Expect")
		req.Body = io.NopCloser(bytes.NewReader(sent))
		resp, err = w.next.RoundTrip(req)
	}
	if err != nil {
		return nil, w.failure(req.Context(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 {
		// A 101 to a request that asked for no upgrade hands the raw
		// connection over as the body, which no deadline ends.
		return nil, w.failure(req.Context(), fmt.Errorf("%w: %q", errUnasked, resp.Status))
	}
	if ce := resp.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		return nil, w.failure(req.Context(), fmt.Errorf("%w: Content-Encoding %q", errUnasked, ce))
	}
	body, err := faults.ReadBody(resp.Body, w.maxBody)
	if err != nil {
		return nil, w.failure(req.Context(), fmt.Errorf("reading the %d answer: %w", resp.StatusCode, err))
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		if d := RetryAfter(resp, time.Now()); d > 0 {
			w.meter.Hold(d)
		}
	}
	h := http.Header{}
	for k, vs := range resp.Header {
		for _, v := range vs {
			h.Add(w.scrub.Replace(k), w.scrub.Replace(v))
		}
	}
	if loc := h.Get("Location"); loc != "" && resp.StatusCode >= 300 && resp.StatusCode < 400 {
		// A redirect is evidence, never a hop: without Location no
		// http.Client above follows it.
		h.Del("Location")
		h.Set(RedirectHeader, loc)
	}
	out := newResponse(req, resp.StatusCode, h, []byte(w.scrub.Replace(string(body))))
	out.Status = w.scrub.Replace(resp.Status)
	return out, nil
}

// watchedBody is a request body that tells whether the transport read
// any of it: net/http closes a request's body once it is done with it
// (written, or skipped after a final answer to Expect: 100-continue).
type watchedBody struct {
	r      *bytes.Reader
	read   atomic.Bool
	closed chan struct{}
	once   sync.Once
}

func newWatchedBody(b []byte) *watchedBody {
	return &watchedBody{r: bytes.NewReader(b), closed: make(chan struct{})}
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 {
		b.read.Store(true)
	}
	return n, err
}

func (b *watchedBody) Close() error { b.once.Do(func() { close(b.closed) }); return nil }

// sent reports whether any of the body may have reached the provider:
// it waits for the transport to be done with it (the answer's body is
// closed, so the connection is), and counts a body still held when ctx
// ends as sent.
func (b *watchedBody) sent(ctx context.Context) bool {
	select {
	case <-b.closed:
		return b.read.Load()
	case <-ctx.Done():
		return true
	}
}

// resendRefused is err, a resend after a 417 that was not sent, as a
// request the provider received when the first one's body reached it
// (faults.NotSent is false: the fault layer records it forwarded).
func resendRefused(err error, bodySent bool) error {
	if !bodySent {
		return err
	}
	return bodyReceived{err}
}

type bodyReceived struct{ error }

func (e bodyReceived) Error() string {
	return e.error.Error() + " (the provider received the whole create before it answered its expectation 417; not sent again)"
}
func (bodyReceived) NotSent() bool   { return false }
func (e bodyReceived) Unwrap() error { return e.error }

// RedirectHeader carries a 3xx answer's Location (scrubbed), which the
// wire removes so that no client follows it.
const RedirectHeader = "Idemcheck-Redirect-Location"

// failure is err with the keys scrubbed from its text (net/http quotes a
// malformed status line), and the duration budget named when the run's
// deadline ended the request.
func (w *wire) failure(ctx context.Context, err error) error {
	if errors.Is(context.Cause(ctx), errInterrupted) {
		return &InterruptError{Why: w.meter.Interrupted(), inFlight: true}
	}
	if errors.Is(context.Cause(ctx), errDeadline) {
		return &BudgetError{Resource: "duration", Limit: w.meter.limits.MaxDuration.String(), inFlight: true}
	}
	return &WireError{msg: w.scrub.Replace(err.Error()), err: err}
}

// WireError is a request that failed on the wire, with the real cause
// first: "connection refused", "timeout", "oversize", "malformed answer",
// or the transport's words. Its text never holds an API key.
type WireError struct {
	msg string
	err error
}

func (e *WireError) Error() string { return "remote: " + Cause(e.err) + ": " + e.msg }

// Unwrap gives the transport's error (errors.Is(err, faults.ErrOversize)).
func (e *WireError) Unwrap() error { return e.err }

// Cause names what went wrong with a request, in the words a report
// leads with: "budget", "oversize", "connection refused", "timeout",
// "invalid header value", "malformed or cut answer", or "no answer". (A
// redirect is an answer, not an error: see RedirectHeader.)
func Cause(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, ErrBudget):
		return "budget"
	case errors.Is(err, faults.ErrOversize):
		return "oversize"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case strings.Contains(err.Error(), "invalid header field value"):
		return "invalid header value"
	case errors.Is(err, errUnasked), strings.Contains(err.Error(), "malformed HTTP"), strings.Contains(err.Error(), "EOF"):
		return "malformed or cut answer"
	}
	return "no answer"
}

// errUnasked is an answer the request did not ask for: an informational
// (1xx) status as the final answer, or a content coding other than the
// gzip the transport decodes.
var errUnasked = errors.New("an answer the request did not ask for")

// errDeadline is the cause of a request context ended by the duration
// budget's deadline.
var errDeadline = errors.New("remote: the duration budget's deadline")

// errInterrupted is the cause of a request context ended by the run's
// interrupt (Meter.Interrupt).
var errInterrupted = errors.New("remote: the run was interrupted")

// withDeadline bounds ctx by the meter's deadline, with errDeadline as
// the cause, so a request in flight then ends then (not at its own
// timeout), and by its interrupt, with errInterrupted.
func (m *Meter) withDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancelDeadline := context.WithDeadlineCause(ctx, m.Deadline(), errDeadline)
	ctx, cancel := context.WithCancelCause(ctx)
	unhook := context.AfterFunc(m.interrupted, func() { cancel(errInterrupted) })
	return ctx, func() { unhook(); cancel(nil); cancelDeadline() }
}
