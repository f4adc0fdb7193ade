package certify_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/provider/server"
)

// A provider that refuses a long body from its headers alone (413, the
// body never read, the connection closed: what a proxy with a body limit
// does) is judged on its answer. The harness sent the whole body at once,
// so the provider's socket took it in while the 413 went out, and under
// load the reset of that connection could reach the harness before the
// 413 did: INCONCLUSIVE ("answered no response"), where there was an
// answer to judge. Long bodies now ask first (Expect: 100-continue) and
// wait to be told to send; this server counts what each connection
// carried, and the connection a 413 went out on carried no body: less
// than the 4 KiB net/http reads at once, which the body filled before.
func TestCertify_EarlyRefusalOfALongBodyIsJudged(t *testing.T) {
	h, err := server.Handler("", 0, 0)
	require.NoError(t, err)
	var (
		mu      sync.Mutex
		refused []*countedConn
	)
	connKey := new(int)
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength <= 40000 {
			h.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		refused = append(refused, r.Context().Value(connKey).(*countedConn))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/problem+json")
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		_, _ = w.Write([]byte(`{"title":"Content Too Large","status":413}`))
	}))
	s.Listener = countingListener{s.Listener}
	s.Config.ConnContext = func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, connKey, c) }
	s.Start()
	t.Cleanup(s.Close)

	requireVerdict(t, s.URL, certify.ReqBodyLimit, reports.Fail, "a create of exactly the profile's max_body_bytes (262144 bytes) answered 413")
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, refused)
	for _, c := range refused {
		assert.Less(t, c.read.Load(), int64(4096), "bytes the provider's connection carried with a create it refused from its headers")
	}
}

// countingListener counts what each connection it accepts carries in.
type countingListener struct{ net.Listener }

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countedConn{Conn: c}, nil
}

// countedConn is a connection with the bytes read from it so far.
type countedConn struct {
	net.Conn
	read atomic.Int64
}

func (c *countedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

// A provider that answers the expectation itself 417 Expectation Failed
// (RFC 9110 §10.1.1: a server may refuse it) gets the request again
// without it, as the RFC says a client should: body-over-limit-refused
// judges the reference's 413 to that, and PASSes, where it read the 417
// as the provider's answer.
func TestCertify_ExpectationRefusedIsSentAgainWithout(t *testing.T) {
	var refusedExpect atomic.Int64
	url := wrapRef(t, func(w http.ResponseWriter, r *http.Request) bool {
		if r.Header.Get("Expect") == "" {
			return false
		}
		refusedExpect.Add(1)
		w.WriteHeader(http.StatusExpectationFailed)
		return true
	})
	requireVerdict(t, url, certify.ReqBodyLimit, reports.Pass, "")
	assert.Positive(t, refusedExpect.Load(), "the provider saw the expectation")
}
