// Package hostile is a provider that misbehaves, on loopback, for the
// tests of idemcheck's promises against a URL it does not control: one
// server with modes — hang, garbage, an endless body, a dribble, a
// redirect, a keep-alive trap, 429 or 503 forever, HTML or random 201s, the
// reference provider echoing the API key everywhere it can (plainly or
// gzip-encoded), a gzip bomb and an unasked 101. It counts
// what it received (requests, creates, connections), which the tests
// hold against the budgets.
package hostile

import (
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/sut/provider"
)

// Mode is how the server answers.
type Mode string

// The modes.
const (
	// Reference answers as the reference provider (sut/provider), 1 h
	// retention.
	Reference Mode = "reference"
	// Hang reads the request and never answers, until the client hangs up
	// or the server closes.
	Hang Mode = "hang"
	// Garbage answers bytes that are not HTTP, holding the API key, and
	// closes.
	Garbage Mode = "garbage"
	// Endless answers 200 with a body that never ends.
	Endless Mode = "endless"
	// Dribble answers 200 and then one byte of body every 50 ms, never
	// ending.
	Dribble Mode = "dribble"
	// Redirect answers 307 to Options.Target (same path and query, the
	// key in the query), for every request.
	Redirect Mode = "redirect"
	// KeepAliveTrap answers as the reference provider, but reads the
	// second and later request on one connection and closes it without an
	// answer: net/http resends such a request (a GET, or a POST carrying
	// an Idempotency-Key) on a new connection, unseen by a meter above it.
	KeepAliveTrap Mode = "keep-alive-trap"
	// RateLimit answers 429 with Retry-After Options.RetryAfter ("1" when
	// empty; "-" for none), forever.
	RateLimit Mode = "429"
	// Unavailable answers 503 forever (Retry-After as for RateLimit, none
	// by default).
	Unavailable Mode = "503"
	// HTML answers every create 201 with the same HTML page and no charge
	// behind it; find-by-reference answers as the reference provider.
	HTML Mode = "html"
	// Random answers every create 201 with 64 random bytes (crypto/rand),
	// other bytes each time and no charge behind them, and every other
	// request 200 with random bytes (PostsOnly: the reference provider
	// answers lookups).
	Random Mode = "random"
	// EchoKey is the reference provider echoing the Authorization token
	// in every charge id, in a response header and in every error body.
	EchoKey Mode = "echo-key"
	// EchoEscaped is EchoKey with the key as a provider may escape it:
	// its first character JSON-escaped in every charge id
	// ("ch_\u0073k_test…_000001"), base64-encoded in the X-Echo header
	// ("Bearer <key>"), and percent-encoded, lower-case hex, in every
	// error body.
	EchoEscaped Mode = "echo-escaped"
	// EchoCase is EchoKey with the key upper-cased in every charge id and
	// error body, and sent as a header name too ("X-Key-<key>: 1", which
	// net/http canonicalizes to "X-Key-Sk_test_…", the rest lower-cased).
	EchoCase Mode = "echo-case"
	// GzipEcho is EchoKey with every answer gzip-encoded
	// (Content-Encoding: gzip), whatever the request's Accept-Encoding.
	GzipEcho Mode = "gzip-echo"
	// GzipBomb answers 200 with a gzip-encoded body of 64 KiB that
	// decodes to 64 MiB of spaces.
	GzipBomb Mode = "gzip-bomb"
	// Switch answers "101 Switching Protocols" to a request that asked
	// for no upgrade, then sends nothing, until the client hangs up or the
	// server closes.
	Switch Mode = "101"
)

// Options configure a Server; the zero value is the reference provider.
type Options struct {
	Mode Mode
	// After is how many requests (counted from 0, GETs included) the
	// reference provider answers before Mode applies.
	After int
	// Until, when positive, is the request (counted like After) from
	// which the reference provider answers again.
	Until int
	// RetryAfter is the Retry-After value of RateLimit and Unavailable;
	// values separated by "\n" are sent as several Retry-After lines.
	RetryAfter string
	// PostsOnly applies Mode to creates only: lookups are answered by the
	// reference provider.
	PostsOnly bool
	// Target is where Redirect points (a base URL).
	Target string
	// Provider answers where the reference provider would (Reference,
	// KeepAliveTrap, EchoKey, HTML's lookups, before After); default
	// sut/provider with a 1 h retention window.
	Provider http.Handler
}

// Server is a hostile provider on 127.0.0.1. Safe for concurrent use.
type Server struct {
	// URL is its base URL, "http://127.0.0.1:PORT".
	URL  string
	opts Options
	prov http.Handler
	srv  *http.Server
	done chan struct{} // closed by Close: hanging handlers return

	mu       sync.Mutex // guards the counts
	requests int
	posts    int
	conns    int
	arrived  []time.Time
}

// Start serves opts on a free loopback port until the test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	if opts.Mode == "" {
		opts.Mode = Reference
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if opts.Provider == nil {
		opts.Provider = provider.New(provider.Config{Retention: time.Hour})
	}
	s := &Server{URL: "http://" + ln.Addr().String(), opts: opts, prov: opts.Provider, done: make(chan struct{})}
	s.srv = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
		ConnContext: func(ctx context.Context, _ net.Conn) context.Context {
			s.mu.Lock()
			s.conns++
			s.mu.Unlock()
			return context.WithValue(ctx, connKey{}, new(int))
		},
	}
	go func() { _ = s.srv.Serve(ln) }()
	t.Cleanup(s.Close)
	return s
}

type connKey struct{}

// Close stops the server and releases hanging handlers.
func (s *Server) Close() {
	select {
	case <-s.done:
		return
	default:
		close(s.done)
	}
	_ = s.srv.Close()
}

// Counts are what the server received so far: requests, creates (POSTs)
// and TCP connections accepted.
func (s *Server) Counts() (requests, posts, conns int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests, s.posts, s.conns
}

// Arrivals are the times the requests arrived, in order.
func (s *Server) Arrivals() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.arrived...)
}

// ServeHTTP answers r as the mode says.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	n := s.requests
	s.requests++
	if r.Method == http.MethodPost {
		s.posts++
	}
	s.arrived = append(s.arrived, time.Now())
	s.mu.Unlock()
	onConn := r.Context().Value(connKey{}).(*int)
	*onConn++ // one handler at a time per HTTP/1.1 connection
	mode := s.opts.Mode
	if n < s.opts.After || s.opts.Until > 0 && n >= s.opts.Until || s.opts.PostsOnly && r.Method != http.MethodPost {
		mode = Reference
	}
	key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	switch mode {
	case Hang:
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
	case Garbage:
		s.hijack(w, func(c net.Conn) { _, _ = fmt.Fprintf(c, "\x00\x7fnot http %s\r\n\r\n", key) })
	case Endless:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, `{"data":[`)
		spaces := []byte(strings.Repeat(" ", 64<<10))
		for {
			if _, err := w.Write(spaces); err != nil {
				return
			}
		}
	case Dribble:
		s.dribble(w, r)
	case Redirect:
		http.Redirect(w, r, s.opts.Target+r.URL.Path+"?"+r.URL.RawQuery+"&key="+key, http.StatusTemporaryRedirect)
	case KeepAliveTrap:
		if *onConn > 1 {
			_, _ = io.Copy(io.Discard, r.Body) // the request was read in full
			s.hijack(w, func(net.Conn) {})
			return
		}
		s.prov.ServeHTTP(w, r)
	case RateLimit, Unavailable:
		ra := s.opts.RetryAfter
		if ra == "" && mode == RateLimit {
			ra = "1"
		}
		if ra != "" && ra != "-" {
			for _, v := range strings.Split(ra, "\n") {
				w.Header().Add("Retry-After", v)
			}
		}
		code := http.StatusTooManyRequests
		if mode == Unavailable {
			code = http.StatusServiceUnavailable
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(code)
		_, _ = fmt.Fprintf(w, `{"title":%q,"status":%d}`, http.StatusText(code), code)
	case HTML:
		if r.Method != http.MethodPost {
			s.prov.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, "<html><body>Thank you!</body></html>")
	case Random:
		b := make([]byte, 64)
		_, _ = rand.Read(b)
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
		}
		_, _ = w.Write(b)
	case EchoKey:
		s.echo(w, r, key, key, key)
	case EchoEscaped:
		s.echo(w, r, jsonEscapeFirst(key), base64.StdEncoding.EncodeToString([]byte("Bearer "+key)), percentEncode(key))
	case EchoCase:
		w.Header().Set("X-Key-"+key, "1")
		s.echo(w, r, strings.ToUpper(key), strings.ToUpper(key), strings.ToUpper(key))
	case GzipEcho:
		gz := &gzipWriter{ResponseWriter: w}
		s.echo(gz, r, key, key, key)
		gz.close()
	case GzipBomb:
		gz := &gzipWriter{ResponseWriter: w}
		gz.Header().Set("Content-Type", "application/json")
		spaces := []byte(strings.Repeat(" ", 1<<20))
		for i := 0; i < 64; i++ {
			_, _ = gz.Write(spaces)
		}
		gz.close()
	case Switch:
		s.hijack(w, func(c net.Conn) {
			_, _ = io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: idemcheck\r\nConnection: Upgrade\r\n\r\n")
			go func() { <-s.done; _ = c.Close() }()
			_, _ = io.Copy(io.Discard, c) // until the client hangs up, or Close
		})
	default:
		s.prov.ServeHTTP(w, r)
	}
}

// hijack takes the connection, lets f write to it, and closes it.
func (s *Server) hijack(w http.ResponseWriter, f func(net.Conn)) {
	c, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	_ = buf.Flush()
	f(c)
	_ = c.Close()
}

// dribble writes a 200 header, then a byte every 50 ms until the client
// hangs up or the server closes.
func (s *Server) dribble(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err := io.WriteString(w, " "); err != nil || rc.Flush() != nil {
			return
		}
		select {
		case <-tick.C:
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		}
	}
}

// echo answers as the reference provider, with inID in every charge id
// ("ch_<inID>_000001", written as it is into the JSON), inHeader in the
// X-Echo header and inDetail in every error body's detail.
func (s *Server) echo(w http.ResponseWriter, r *http.Request, inID, inHeader, inDetail string) {
	rec := &recorder{header: http.Header{}}
	s.prov.ServeHTTP(rec, r)
	body := strings.ReplaceAll(rec.body.String(), `"ch_`, `"ch_`+inID+`_`)
	if rec.code >= 400 {
		var m map[string]any
		if json.Unmarshal([]byte(body), &m) == nil {
			m["detail"] = "request by " + inDetail
			b, _ := json.Marshal(m)
			body = string(b)
		}
	}
	for k, vs := range rec.header {
		w.Header()[k] = vs
	}
	w.Header().Del("Content-Length")
	w.Header().Set("X-Echo", inHeader)
	w.WriteHeader(rec.code)
	_, _ = io.WriteString(w, body)
}

// jsonEscapeFirst is key with its first character as a JSON \u escape.
func jsonEscapeFirst(key string) string {
	if key == "" {
		return ""
	}
	return fmt.Sprintf(`\u%04x`, key[0]) + key[1:]
}

// percentEncode is every byte of key as %xx, lower-case hex.
func percentEncode(key string) string {
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		fmt.Fprintf(&b, "%%%02x", key[i])
	}
	return b.String()
}

// gzipWriter gzip-encodes what is written to the ResponseWriter under
// it; close ends the stream.
type gzipWriter struct {
	http.ResponseWriter
	zw *gzip.Writer
}

func (g *gzipWriter) WriteHeader(code int) {
	if g.zw == nil {
		g.Header().Del("Content-Length")
		g.Header().Set("Content-Encoding", "gzip")
		g.ResponseWriter.WriteHeader(code)
		g.zw = gzip.NewWriter(g.ResponseWriter)
	}
}

func (g *gzipWriter) Write(b []byte) (int, error) {
	g.WriteHeader(http.StatusOK)
	return g.zw.Write(b)
}

func (g *gzipWriter) close() {
	g.WriteHeader(http.StatusOK)
	_ = g.zw.Close()
}

// recorder is an http.ResponseWriter that keeps what is written.
type recorder struct {
	header http.Header
	code   int
	body   strings.Builder
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(b)
}
