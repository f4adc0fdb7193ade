package remote_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// rawExpect is a raw loopback provider: every connection's request head
// is parsed by hand, then answer writes what it likes on the connection
// (n is the request's number, from 1). It records each request's
// Idempotency-Key, Expect, and how many body bytes the connection carried
// in: read until the client closes it, which it does once answered, or 5 s
// of silence (generous: a loaded runner may be slow to send).
type rawExpect struct {
	ln     net.Listener
	URL    string
	answer func(n int, c net.Conn, br *bufio.Reader, h http.Header, cl int64)

	mu    sync.Mutex
	reqs  []rawReq
	wg    sync.WaitGroup
	close chan struct{}
}

type rawReq struct {
	key, expect, auth string
	bodyBytes         int64 // body bytes that reached the provider
	contentLength     int64
}

func startRawExpect(t *testing.T, answer func(n int, c net.Conn, br *bufio.Reader, h http.Header, cl int64)) *rawExpect {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &rawExpect{ln: ln, URL: "http://" + ln.Addr().String(), answer: answer, close: make(chan struct{})}
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Go(func() { s.serve(c) })
		}
	})
	t.Cleanup(s.stop)
	return s
}

// countingReader counts what was read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (s *rawExpect) serve(c net.Conn) {
	defer c.Close()
	cr := &countingReader{r: c}
	br := bufio.NewReader(cr)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	head := cr.n - int64(br.Buffered())
	s.mu.Lock()
	s.reqs = append(s.reqs, rawReq{key: req.Header.Get(models.IdempotencyKeyHeader), expect: req.Header.Get("Expect"), auth: req.Header.Get("Authorization"), contentLength: req.ContentLength})
	n := len(s.reqs)
	s.mu.Unlock()
	s.answer(n, c, br, req.Header, req.ContentLength)
	// Whatever else the client sends on this connection is body.
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, _ = io.Copy(io.Discard, br)
	s.mu.Lock()
	s.reqs[n-1].bodyBytes = cr.n - head
	s.mu.Unlock()
}

// stop closes the listener and waits until every connection is served:
// read to its end (the client closed it) or 5 s of silence, so that
// received counts every body byte that reached the provider.
func (s *rawExpect) stop() {
	select {
	case <-s.close:
	default:
		close(s.close)
	}
	_ = s.ln.Close()
	s.wg.Wait()
}

func (s *rawExpect) received() []rawReq {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]rawReq(nil), s.reqs...)
}

// fullCreates counts the requests whose whole body reached the provider.
func (s *rawExpect) fullCreates() int {
	n := 0
	for _, r := range s.received() {
		if r.contentLength > 0 && r.bodyBytes >= r.contentLength {
			n++
		}
	}
	return n
}

const expectKey remote.APIKey = "sk_test_expectSECRET0123456789"

// longCreate sends one create whose body is over 64 KiB through p.
func longCreate(t *testing.T, p *remote.Provider, key string) (*http.Response, error) {
	body := `{"amount":1099,"currency":"USD","source":"tok_visa","merchant_reference":"long","description":"` + strings.Repeat("x", 100<<10) + `"}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://provider/v1/charges", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set(models.IdempotencyKeyHeader, models.FormatKey(key))
	req.Header.Set("Content-Type", "application/json")
	return p.Transport().RoundTrip(req)
}

const answer417 = "HTTP/1.1 417 Expectation Failed\r\nContent-Length: 0\r\n\r\n"
const answer201 = "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"

// A provider that answers the expectation 417 after the body reached it
// (it said 100 Continue and read it; or it ignored the expectation and
// the client sent the body after ExpectContinueTimeout; or it answered
// 417 without Connection: close, so net/http sent the body to keep the
// connection) received a whole create. The resend is a second whole
// create of the charges budget: a provider that charges on every create
// it receives (what MaxCharges bounds, config.go) is sent one under a
// budget of one charge. A breaker's providers got two when the resend was
// metered as a request alone (and, with the CLI, 73 whole creates under
// --budget-charges 72).
func TestProvider_ExpectationResendAfterTheBodyIsACreate(t *testing.T) {
	modes := map[string]func(n int, c net.Conn, br *bufio.Reader, h http.Header, cl int64){
		"100 Continue, the body read, then 417": func(n int, c net.Conn, br *bufio.Reader, h http.Header, cl int64) {
			if h.Get("Expect") != "" {
				_, _ = io.WriteString(c, "HTTP/1.1 100 Continue\r\n\r\n")
				_, _ = io.CopyN(io.Discard, br, cl)
				_, _ = io.WriteString(c, answer417)
				return
			}
			_, _ = io.CopyN(io.Discard, br, cl)
			_, _ = io.WriteString(c, answer201)
		},
		"417 kept alive (net/http sends the body)": func(n int, c net.Conn, br *bufio.Reader, h http.Header, cl int64) {
			if h.Get("Expect") != "" {
				_, _ = io.WriteString(c, answer417)
				return
			}
			_, _ = io.CopyN(io.Discard, br, cl)
			_, _ = io.WriteString(c, answer201)
		},
		"sleeps past ExpectContinueTimeout, reads the body, then 417": func(n int, c net.Conn, br *bufio.Reader, h http.Header, cl int64) {
			if h.Get("Expect") != "" {
				time.Sleep(1200 * time.Millisecond)
				_, _ = io.CopyN(io.Discard, br, cl)
				_, _ = io.WriteString(c, "HTTP/1.1 417 Expectation Failed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
				return
			}
			_, _ = io.CopyN(io.Discard, br, cl)
			_, _ = io.WriteString(c, answer201)
		},
	}
	for name, answer := range modes {
		t.Run(name, func(t *testing.T) {
			s := startRawExpect(t, answer)
			p, err := remote.New(remote.Config{BaseURL: s.URL, APIKey: expectKey, Limits: remote.Limits{MaxRequests: 10, MaxCharges: 1, MaxDuration: time.Minute}})
			require.NoError(t, err)
			resp, err := longCreate(t, p, "k1")
			if err == nil {
				_ = resp.Body.Close()
			}
			s.stop()
			reqs, posts := p.Meter().Used()
			assert.Equal(t, len(s.received()), reqs, "the meter counts the requests the provider received")
			assert.Equal(t, s.fullCreates(), posts, "and the whole creates")
			assert.LessOrEqual(t, s.fullCreates(), 1, "whole creates the provider received under a budget of one charge")
		})
	}
}

// Whatever a hostile provider answers to the expectation, and to the
// resend, the provider receives no more requests than the requests budget
// and at most one resend per create, the meter counts what it received,
// and the API key is in nothing reported.
func TestProvider_ExpectationHostileModes(t *testing.T) {
	type mode = func(n int, c net.Conn, br *bufio.Reader, h http.Header, cl int64)
	always417 := func(n int, c net.Conn, br *bufio.Reader, h http.Header, cl int64) {
		_, _ = io.WriteString(c, "HTTP/1.1 417 Expectation Failed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
	}
	modes := map[string]mode{
		"417 always": always417,
		"417 then close": func(n int, c net.Conn, br *bufio.Reader, h http.Header, cl int64) {
			_, _ = io.WriteString(c, "HTTP/1.1 417 Expectation Failed\r\nConnection: close\r\n\r\n")
			_ = c.Close()
		},
		"417 only the second time": func(n int, c net.Conn, br *bufio.Reader, h http.Header, cl int64) {
			if n == 2 {
				always417(n, c, br, h, cl)
				return
			}
			if h.Get("Expect") != "" {
				_, _ = io.WriteString(c, "HTTP/1.1 100 Continue\r\n\r\n")
			}
			_, _ = io.CopyN(io.Discard, br, cl)
			_, _ = io.WriteString(c, answer201)
		},
		"417 with the key in the status and a header": func(n int, c net.Conn, br *bufio.Reader, h http.Header, cl int64) {
			_, _ = io.WriteString(c, "HTTP/1.1 417 "+h.Get("Authorization")+"\r\nX-Echo: "+h.Get("Authorization")+"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		},
		"the resend answered with the key in status, header and body": func(n int, c net.Conn, br *bufio.Reader, h http.Header, cl int64) {
			if h.Get("Expect") != "" {
				always417(n, c, br, h, cl)
				return
			}
			_, _ = io.CopyN(io.Discard, br, cl)
			b := `{"echo":"` + h.Get("Authorization") + `"}`
			_, _ = io.WriteString(c, "HTTP/1.1 413 "+h.Get("Authorization")+"\r\nX-Echo: "+h.Get("Authorization")+"\r\nContent-Length: "+strconv.Itoa(len(b))+"\r\nConnection: close\r\n\r\n"+b)
		},
	}
	for name, answer := range modes {
		for _, budget := range []int{1, 2, 3} {
			t.Run(name+"/"+strconv.Itoa(budget), func(t *testing.T) {
				s := startRawExpect(t, answer)
				p, err := remote.New(remote.Config{BaseURL: s.URL, APIKey: expectKey, Limits: remote.Limits{MaxRequests: budget, MaxCharges: budget, MaxDuration: time.Minute}})
				require.NoError(t, err)
				var reported bytes.Buffer
				for i := range 3 {
					resp, err := longCreate(t, p, "key-"+strconv.Itoa(i))
					if err != nil {
						reported.WriteString(err.Error())
						continue
					}
					reported.WriteString(resp.Status)
					_ = resp.Header.Write(&reported)
					b, _ := io.ReadAll(resp.Body)
					reported.Write(b)
					_ = resp.Body.Close()
				}
				s.stop()
				got := s.received()
				assert.LessOrEqual(t, len(got), budget, "requests received over the budget")
				reqs, _ := p.Meter().Used()
				assert.Equal(t, len(got), reqs, "the meter counts what the provider received")
				per := map[string]int{}
				for _, r := range got {
					per[r.key]++
				}
				for k, n := range per {
					assert.LessOrEqual(t, n, 2, "requests under key %s: one resend at most", k)
				}
				assert.NotContains(t, reported.String(), string(expectKey))
			})
		}
	}
}

// The first create's whole body reached the provider (100 Continue, read,
// then 417), and the resend does not fit: the error says the request was
// never sent (faults.NotSent), so the fault layer records a create the
// provider received, and may have charged, as never forwarded.
func TestProvider_ExpectationRefusedAfterTheBodyIsNotNotSent(t *testing.T) {
	s := startRawExpect(t, func(n int, c net.Conn, br *bufio.Reader, h http.Header, cl int64) {
		_, _ = io.WriteString(c, "HTTP/1.1 100 Continue\r\n\r\n")
		_, _ = io.CopyN(io.Discard, br, cl)
		_, _ = io.WriteString(c, answer417)
	})
	p, err := remote.New(remote.Config{BaseURL: s.URL, APIKey: expectKey, Limits: remote.Limits{MaxRequests: 1, MaxDuration: time.Minute}})
	require.NoError(t, err)
	_, err = longCreate(t, p, "k1")
	require.ErrorIs(t, err, remote.ErrBudget)
	s.stop()
	require.Equal(t, 1, s.fullCreates(), "the provider received the whole create")
	var ns interface{ NotSent() bool }
	require.True(t, errors.As(err, &ns))
	assert.False(t, ns.NotSent(), "a create whose whole body reached the provider reported as never sent: %v", err)
}

// A Retry-After another request's answer asked for holds everything sent
// to the provider (Meter.Hold: "nothing is sent to it until d has
// passed"), the resend after a 417 too: here the 417 comes once a lookup
// was answered 503 with Retry-After: 2, and the resend comes no sooner
// than that asked (it came 0.2 s later before).
func TestProvider_ExpectationResendWaitsOutAHold(t *testing.T) {
	arrived, held := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	var answered503, resent time.Time
	s := startRawExpect(t, func(n int, c net.Conn, br *bufio.Reader, h http.Header, cl int64) {
		switch {
		case h.Get("Expect") != "":
			close(arrived)
			<-held // the lookup's 503 has been answered
			_, _ = io.WriteString(c, "HTTP/1.1 417 Expectation Failed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		case cl > 0:
			mu.Lock()
			resent = time.Now()
			mu.Unlock()
			_, _ = io.CopyN(io.Discard, br, cl)
			_, _ = io.WriteString(c, answer201)
		default:
			mu.Lock()
			answered503 = time.Now()
			mu.Unlock()
			_, _ = io.WriteString(c, "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 2\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		}
	})
	p, err := remote.New(remote.Config{BaseURL: s.URL, APIKey: expectKey, Limits: remote.Limits{MaxDuration: time.Minute}})
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Go(func() {
		if resp, err := longCreate(t, p, "k1"); err == nil {
			_ = resp.Body.Close()
		}
	})
	<-arrived
	_, _ = p.Find(t.Context(), "idemcheck-x") // 503, Retry-After: 2
	close(held)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	require.False(t, resent.IsZero(), "the create was sent again")
	assert.GreaterOrEqual(t, resent.Sub(answered503), 1900*time.Millisecond, "the resend came %s after the provider asked for 2 s", resent.Sub(answered503))
}
