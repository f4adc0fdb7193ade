package client_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/client"
)

const baseURL = "http://provider.test"

// roundTripFunc is an http.RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// sent is one request as the stub provider received it.
type sent struct {
	Method    string
	Path      string
	Query     url.Values
	KeyHeader string // the Idempotency-Key header exactly as sent
	HasKey    bool
	Header    http.Header
	Body      models.ChargeRequest
	At        time.Time // virtual time of arrival
}

// answer produces the stub's response to one request.
type answer func(r *http.Request) (*http.Response, error)

// wire is a scripted stub provider: the n-th request since the script was
// set gets answers[n], the last answer repeating. It records every request.
type wire struct {
	mu      sync.Mutex // guards reqs, answers, base
	reqs    []sent
	answers []answer
	base    int // the request the answers start at
	// onRequest, if set, runs at the start of every RoundTrip.
	onRequest func(n int, r *http.Request)
}

func newWire(answers ...answer) *wire { return &wire{answers: answers} }

func (w *wire) RoundTrip(r *http.Request) (*http.Response, error) {
	s := sent{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(), At: time.Now()}
	s.KeyHeader = r.Header.Get(models.IdempotencyKeyHeader)
	_, s.HasKey = r.Header[models.IdempotencyKeyHeader]
	if r.Body != nil {
		b, _ := io.ReadAll(r.Body)
		_ = r.Body.Close()
		_ = json.Unmarshal(b, &s.Body)
	}
	w.mu.Lock()
	n := len(w.reqs)
	w.reqs = append(w.reqs, s)
	answers, i := w.answers, n-w.base
	w.mu.Unlock()
	if w.onRequest != nil {
		w.onRequest(n, r)
	}
	if len(answers) == 0 {
		return reply(http.StatusCreated, charge("ch_000001"))(r)
	}
	return answers[min(i, len(answers)-1)](r)
}

// script replaces the answers; the next request gets the first of them.
func (w *wire) script(answers ...answer) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.answers, w.base = answers, len(w.reqs)
}

func (w *wire) sent() []sent {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]sent(nil), w.reqs...)
}

func (w *wire) posts() []sent {
	var out []sent
	for _, s := range w.sent() {
		if s.Method == http.MethodPost {
			out = append(out, s)
		}
	}
	return out
}

func (w *wire) gets() []sent {
	var out []sent
	for _, s := range w.sent() {
		if s.Method == http.MethodGet {
			out = append(out, s)
		}
	}
	return out
}

// distinctKeys returns the distinct Idempotency-Key header values of the POSTs.
func (w *wire) distinctKeys() []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range w.posts() {
		if !seen[s.KeyHeader] {
			seen[s.KeyHeader] = true
			out = append(out, s.KeyHeader)
		}
	}
	return out
}

// reply answers status with body as JSON and header pairs ("Retry-After", "2").
func reply(status int, body any, header ...string) answer {
	return func(r *http.Request) (*http.Response, error) {
		b, _ := json.Marshal(body)
		h := http.Header{"Content-Type": {"application/json"}}
		for i := 0; i+1 < len(header); i += 2 {
			h.Set(header[i], header[i+1])
		}
		return &http.Response{
			StatusCode: status, Status: http.StatusText(status), Header: h,
			Body: io.NopCloser(bytes.NewReader(b)), ContentLength: int64(len(b)), Request: r,
			Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		}, nil
	}
}

// status answers a bare problem-details body with code.
func status(code int, header ...string) answer {
	return reply(code, models.Problem{Title: http.StatusText(code), Status: code}, header...)
}

// hang is a provider that never answers: it waits for the try's context
// (bounded by an hour of virtual time, so the bubble cannot block forever).
func hang() answer {
	return func(r *http.Request) (*http.Response, error) {
		select {
		case <-r.Context().Done():
			return nil, r.Context().Err()
		case <-time.After(time.Hour):
			return nil, io.ErrUnexpectedEOF
		}
	}
}

// slow answers with next after d, or fails when the try's context ends first.
func slow(d time.Duration, next answer) answer {
	return func(r *http.Request) (*http.Response, error) {
		select {
		case <-r.Context().Done():
			return nil, r.Context().Err()
		case <-time.After(d):
			return next(r)
		}
	}
}

func charge(id string) models.Charge {
	return models.Charge{ID: id, Amount: 54890, Currency: "TRY", Status: "succeeded"}
}

func declined(code string) models.ErrorBody {
	var e models.ErrorBody
	e.Error.Type, e.Error.Code, e.Error.DeclineCode = "card_error", "card_declined", code
	return e
}

func repeat(n int, a answer) []answer {
	out := make([]answer, n)
	for i := range out {
		out[i] = a
	}
	return out
}

// newClient returns a client on a new store talking to w; mutate adjusts
// the config.
func newClient(w http.RoundTripper, mutate ...func(*client.Config)) (*client.Client, *client.Store, client.Config) {
	cfg := client.Config{BaseURL: baseURL, HTTPClient: &http.Client{Transport: w}}
	for _, m := range mutate {
		m(&cfg)
	}
	store := client.NewStore()
	return client.New(cfg, store), store, cfg
}

// onlyAttempt returns the store's single attempt.
func onlyAttempt(t *testing.T, s *client.Store) models.PaymentAttempt {
	t.Helper()
	atts := s.Attempts()
	require.Len(t, atts, 1)
	return atts[0]
}

func order(t *testing.T, s *client.Store, id int64) models.Order {
	t.Helper()
	o, ok := s.Order(id)
	require.True(t, ok)
	return o
}

// unquote strips the Structured Field String quotes of a key header.
func unquote(t *testing.T, h string) string {
	t.Helper()
	key, quoted, ok := models.ParseKey(h)
	require.True(t, ok, "key header %q", h)
	require.True(t, quoted, "key header %q is not quoted", h)
	require.False(t, strings.ContainsAny(key, `"\`))
	return key
}
