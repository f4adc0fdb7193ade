package client

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
	"github.com/failsafe-go/failsafe-go/timeout"

	"github.com/idemcheck/idemcheck/models"
)

// maxBody bounds how much of a response body is read, in bytes.
const maxBody = 1 << 20

// ShouldRetry is the retry rule of seed article 000 (its ShouldRetry over
// .NET's HttpClientResiliencePredicates.IsTransient plus 409): req is the
// request as it went on the wire. A POST is retried only when it carries an
// Idempotency-Key header. A try is retried after a transport error or a
// timeout, and on 409 ("the first request under this key is still being
// processed"), 429, 500, 502, 503 and 504; never on 2xx, 400, 402, 422 or
// any other answer, and never when the circuit breaker rejected it.
func ShouldRetry(req *http.Request, resp *http.Response, err error) bool {
	return mayRetry(req) && retryable(resp, err)
}

// mayRetry is ShouldRetry's rule on the request: a POST only with a key.
func mayRetry(req *http.Request) bool {
	if req == nil {
		return false
	}
	return req.Method != http.MethodPost || strings.TrimSpace(req.Header.Get(models.IdempotencyKeyHeader)) != ""
}

// retryable is ShouldRetry's rule on the answer of a request that may be
// retried.
func retryable(resp *http.Response, err error) bool {
	if err != nil {
		return !errors.Is(err, circuitbreaker.ErrOpen)
	}
	if resp == nil {
		return false
	}
	switch resp.StatusCode {
	case http.StatusConflict, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// breakerFailure is what the circuit breaker counts as a failure: transport
// errors and timeouts, 429 and 5xx. A cancellation by the caller is not the
// provider's fault and is not counted.
func breakerFailure(resp *http.Response, err error) bool {
	if err != nil {
		return !errors.Is(err, context.Canceled)
	}
	return resp != nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500)
}

// unknownStatus reports whether an answer leaves a charge's fate unknown:
// 409 and 500/502/504 (docs/provider-api.md). 429 and 503 are transient: the
// reference dialect documents that nothing was charged.
func unknownStatus(code int) bool {
	switch code {
	case http.StatusConflict, http.StatusInternalServerError, http.StatusBadGateway, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// reply is the pipeline's final answer and what its tries saw.
type reply struct {
	// status and body are the last response's; status is 0 with err.
	status int
	body   []byte
	err    error
	// tries is how many tries were handed to the transport.
	tries int
	// unknown is true when some try may have reached the provider without
	// a known result: a transport error, a timeout, 409 or 500/502/504.
	unknown bool
}

// pipeline is the resilience pipeline of seed article 000, outermost first:
// total timeout → retry → circuit breaker → attempt timeout → transport.
// WrapTransport wraps the transport inside it, so it sees every try. The
// breaker is shared by all calls of one Client; it is safe for concurrent use.
type pipeline struct {
	cfg     Config
	rt      http.RoundTripper
	total   timeout.Timeout[*http.Response]
	attempt timeout.Timeout[*http.Response]
	breaker circuitbreaker.CircuitBreaker[*http.Response] // nil when disabled
}

func newPipeline(cfg Config) *pipeline {
	var rt http.RoundTripper = wireRecorder{next: cfg.transport()}
	if cfg.At != nil {
		rt = pointTransport{next: rt, at: cfg.At}
	}
	if cfg.WrapTransport != nil {
		rt = cfg.WrapTransport(rt)
	}
	p := &pipeline{
		cfg:     cfg,
		rt:      rt,
		total:   timeout.New[*http.Response](cfg.TotalTimeout),
		attempt: timeout.New[*http.Response](cfg.AttemptTimeout),
	}
	if b := cfg.Breaker; !b.Disabled {
		p.breaker = circuitbreaker.NewBuilder[*http.Response]().
			HandleIf(breakerFailure).
			WithFailureRateThreshold(b.FailureRatio, b.MinimumThroughput, b.SamplingDuration).
			WithDelay(b.BreakDuration).
			WithSuccessThreshold(1).
			Build()
	}
	return p
}

// send runs one request through the pipeline. Every try is a fresh
// http.Request carrying ctx (and so its values), the same body and the
// same header; the response body is read inside the try.
func (p *pipeline) send(ctx context.Context, method, url string, body []byte, header http.Header) reply {
	st := &callState{}
	ctx = context.WithValue(ctx, callStateKey{}, st)
	deadline := time.Now().Add(p.cfg.TotalTimeout)
	retry := retrypolicy.NewBuilder[*http.Response]().
		HandleIf(func(resp *http.Response, err error) bool {
			return p.shouldRetry(st.lastWire(), resp, err)
		}).
		AbortIf(func(resp *http.Response, _ error) bool {
			// Never after the caller's context is done, nor when the
			// provider asks for a pause longer than the time left.
			return ctx.Err() != nil || retryAfter(resp) >= time.Until(deadline)
		}).
		WithMaxRetries(p.cfg.MaxRetries).
		WithDelay(p.cfg.RetryDelay).
		WithDelayFunc(func(exec failsafe.ExecutionAttempt[*http.Response]) time.Duration {
			return p.delay(st.lastRetryAfter(), exec.ElapsedTime())
		}).
		ReturnLastFailure().
		Build()
	policies := []failsafe.Policy[*http.Response]{p.total, retry}
	if p.breaker != nil {
		policies = append(policies, p.breaker)
	}
	policies = append(policies, p.attempt)

	resp, err := failsafe.With(policies...).WithContext(ctx).
		GetWithExecution(func(exec failsafe.Execution[*http.Response]) (*http.Response, error) {
			return p.try(exec.Context(), st, method, url, body, header)
		})
	r := reply{err: err}
	if err == nil && resp != nil {
		r.status = resp.StatusCode
		r.body, _ = io.ReadAll(resp.Body) // an in-memory reader, see try
	}
	r.tries, r.unknown = st.result()
	return r
}

// delay honours the last try's Retry-After d (in seconds, on 429 and 503;
// -1 for none: RetryDelay). A pause that would end when TotalTimeout
// does, or later, is stretched TryDeadlinePad past it, so that the total
// timeout ends the call while it waits and no try begins at its instant:
// the two timers fired at one virtual instant, synctest does not order
// the goroutines they wake, and a try was sent (and given up at once) in
// some runs of a seed and not in others. (A Retry-After at least as long
// as what is left ends the retries at once, see send.)
//
// The last try's answer comes from the call's own state, not from
// failsafe-go's ExecutionAttempt.LastResult: that reads a field without
// the lock under which a Timeout's Cancel writes it (failsafe-go v0.9.8),
// a data race when the total timeout fires as a try ends.
func (p *pipeline) delay(d, elapsed time.Duration) time.Duration {
	if d < 0 {
		d = p.cfg.RetryDelay
	}
	if left := max(0, p.cfg.TotalTimeout-elapsed); d >= left {
		return left + TryDeadlinePad
	}
	return d
}

// retryAfter is the Retry-After of a 429 or 503 answer, or -1 when it has
// none (or an HTTP-date, which the reference dialect does not send).
func retryAfter(resp *http.Response) time.Duration {
	if resp == nil || (resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable) {
		return -1
	}
	s, err := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Retry-After")))
	if err != nil || s < 0 {
		return -1
	}
	return time.Duration(s) * time.Second
}

// try performs one HTTP try under ctx, the try's context.
func (p *pipeline) try(ctx context.Context, st *callState, method, url string, body []byte, header http.Header) (*http.Response, error) {
	st.answered(nil)
	if err := ctx.Err(); err != nil {
		return nil, err // nothing sent
	}
	ctx, cancel := context.WithDeadline(ctx, st.tryDeadline(p.cfg))
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, err // nothing sent
	}
	req.Header = header.Clone()
	st.begin(req)
	resp, err := p.rt.RoundTrip(req)
	if err != nil {
		st.markUnknown()
		return nil, err
	}
	var b []byte
	if resp.Body != nil {
		b, err = io.ReadAll(io.LimitReader(resp.Body, maxBody))
		resp.Body.Close()
	}
	if err != nil {
		st.markUnknown()
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	if unknownStatus(resp.StatusCode) {
		st.markUnknown()
	}
	st.answered(resp)
	return resp, nil
}

// callState is what the tries of one pipeline call saw.
type callState struct {
	mu      sync.Mutex // guards all fields below
	tries   int
	unknown bool
	// wire is what ShouldRetry reads of the last try as it went on the
	// wire (after any WrapTransport middleware): whether there was one,
	// and whether its method and key header let it be retried (mayRetry).
	// Kept instead of a copy of the request's header map per try (issue 29).
	wire wireFacts
	// retryAfter is the last try's Retry-After (see retryAfter), -1 when
	// it had none or no answer.
	retryAfter time.Duration
	totalEnd   time.Time // TotalTimeout after the first try began
}

// wireFacts is what the retry rule reads of a try's request.
type wireFacts struct{ seen, mayRetry bool }

type callStateKey struct{}

// TryDeadlinePad is how much later than failsafe-go's timeouts a try's
// context deadline falls: 1 s. A microsecond let the deadline fire first
// in real time under load (CI: a WireMock try classified "timeout", not
// "client gave up").
const TryDeadlinePad = time.Second

// tryDeadline is the deadline of a try beginning now. failsafe-go's
// attempt and total timeouts cancel a try's context but give it no
// deadline; the try's context carries theirs, TryDeadlinePad later, so
// that their cancellation stays what ends a try even on a loaded machine, and a transport can see
// how long the client will wait (faults.InProcess then runs the provider
// inline, issue 29). Both are measured from a moment after failsafe-go
// started their timers (the total's from the first try), never before.
func (s *callState) tryDeadline(cfg Config) time.Time {
	now := time.Now()
	s.mu.Lock()
	if s.totalEnd.IsZero() {
		s.totalEnd = now.Add(cfg.TotalTimeout)
	}
	d := s.totalEnd
	s.mu.Unlock()
	if a := now.Add(cfg.AttemptTimeout); a.Before(d) {
		d = a
	}
	return d.Add(TryDeadlinePad)
}

func (s *callState) begin(req *http.Request) {
	s.mu.Lock()
	s.tries++
	s.mu.Unlock()
	s.sawWire(req)
}

// sawWire records req as the request the transport actually received,
// after any WrapTransport middleware changed it.
func (s *callState) sawWire(req *http.Request) {
	w := wireFacts{seen: true, mayRetry: mayRetry(req)}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wire = w
}

func (s *callState) markUnknown() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unknown = true
}

// answered records the last try's answer (nil for none) for the delay
// before the next.
func (s *callState) answered(resp *http.Response) {
	d := retryAfter(resp)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.retryAfter = d
}

func (s *callState) lastRetryAfter() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.retryAfter
}

func (s *callState) lastWire() wireFacts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.wire
}

func (s *callState) result() (tries int, unknown bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tries, s.unknown
}

// wireRecorder is the innermost round tripper: it tells the call's state
// which request really went out, so ShouldRetry judges the wire, not the
// request before middleware.
type wireRecorder struct{ next http.RoundTripper }

func (w wireRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if st, ok := req.Context().Value(callStateKey{}).(*callState); ok {
		st.sawWire(req)
	}
	return w.next.RoundTrip(req)
}
