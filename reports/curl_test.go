package reports_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
)

// seen is one request a test server received.
type seen struct {
	method, target, key, auth string
	body                      []byte
}

// recorder is a loopback server that answers 201 to every request and
// keeps what it received.
func recorder(t *testing.T) (*httptest.Server, func() []seen) {
	var mu sync.Mutex // guards got
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, seen{r.Method, r.URL.RequestURI(), r.Header.Get("Idempotency-Key"), r.Header.Get("Authorization"), body})
		mu.Unlock()
		w.Header().Set("Idempotent-Replayed", "true")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"id":"ch_000001"}`)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []seen {
		mu.Lock()
		defer mu.Unlock()
		return append([]seen(nil), got...)
	}
}

// runScript runs script with bash under env, bounded to a minute.
func runScript(t *testing.T, script []byte, env ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "failure.curl.sh")
	require.NoError(t, os.WriteFile(path, script, 0o755))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", path)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "script failed:\n%s\n%s", out, script)
	return string(out)
}

func TestCurlScript(t *testing.T) {
	f := fixture()
	script := reports.CurlScript(f)
	srv, got := recorder(t)
	const secret = "sk_test_do-not-print-me"
	out := runScript(t, script, "IDEMCHECK_PROVIDER_URL="+srv.URL, "IDEMCHECK_API_KEY="+secret)

	t.Run("sends what reached the provider, as it was sent", func(t *testing.T) {
		reqs := got()
		require.Len(t, reqs, 3, "two POSTs reached the provider (the 503 did not), then one GET per reference:\n%s", script)
		want := models.ChargeRequest{Amount: 54890, Currency: "TRY", Source: "tok_visa", Description: "Bookstore order 1",
			MerchantReference: f.History.Exchanges[0].MerchantReference}
		for _, r := range reqs[:2] {
			assert.Equal(t, "POST", r.method)
			assert.Equal(t, "/v1/charges", r.target)
			assert.Equal(t, models.FormatKey(fixtureKey), r.key, "the key header exactly as sent")
			var sent models.ChargeRequest
			require.NoError(t, json.Unmarshal(r.body, &sent))
			assert.Equal(t, models.Fingerprint(want), models.Fingerprint(sent), "%s", r.body)
			assert.JSONEq(t, `{"amount":54890,"currency":"TRY","source":"tok_visa","description":"Bookstore order 1","merchant_reference":"`+want.MerchantReference+`"}`, string(r.body))
			assert.Equal(t, "Bearer "+secret, r.auth)
		}
		assert.Equal(t, "GET", reqs[2].method)
		assert.Equal(t, "/v1/charges?merchant_reference="+want.MerchantReference, reqs[2].target)
		assert.Empty(t, reqs[2].key)
	})

	t.Run("prints status and replay header", func(t *testing.T) {
		assert.Contains(t, out, "HTTP/1.1 201 Created")
		assert.Contains(t, out, "Idempotent-Replayed: true")
		assert.Contains(t, out, `{"id":"ch_000001"}`)
	})

	t.Run("references the secret, never holds it", func(t *testing.T) {
		assert.NotContains(t, string(script), secret)
		assert.Contains(t, string(script), "${IDEMCHECK_API_KEY}")
		assert.Contains(t, string(script), "# exchange 1, +1s, fault 503: never reached the provider, not sent\n")
	})

	t.Run("without an API key sends no Authorization", func(t *testing.T) {
		srv, got := recorder(t)
		runScript(t, script, "IDEMCHECK_PROVIDER_URL="+srv.URL, "IDEMCHECK_API_KEY=")
		for _, r := range got() {
			assert.Empty(t, r.auth)
		}
	})

	t.Run("a card that is not a public test card comes from the environment", func(t *testing.T) {
		g := fixture()
		for i := range g.History.Exchanges {
			g.History.Exchanges[i].Card = ""
		}
		s := reports.CurlScript(g)
		assert.NotContains(t, string(s), "tok_visa")
		srv, got := recorder(t)
		runScript(t, s, "IDEMCHECK_PROVIDER_URL="+srv.URL, "IDEMCHECK_CARD_TOKEN=tok_from_env")
		assert.Contains(t, string(got()[0].body), `"source":"tok_from_env"`)
	})

	t.Run("says when a rebuilt body is not the one sent", func(t *testing.T) {
		assert.Contains(t, string(script), "fingerprint differs", "the fixture's fingerprint is made up")
		g := fixture()
		ex := g.History.Exchanges[0]
		fp := models.Fingerprint(models.ChargeRequest{Amount: ex.Amount, Currency: ex.Currency, Source: "tok_visa",
			Description: ex.Description, MerchantReference: ex.MerchantReference})
		for i := range g.History.Exchanges {
			g.History.Exchanges[i].Fingerprint = fp
		}
		assert.NotContains(t, string(reports.CurlScript(g)), "fingerprint differs")
	})

	t.Run("a provider URL keeps its credentials out", func(t *testing.T) {
		g := fixture()
		g.Provider = "https://user:pw@sandbox.example/api?token=x"
		s := string(reports.CurlScript(g))
		assert.Contains(t, s, `base="${IDEMCHECK_PROVIDER_URL:-https://sandbox.example/api}"`)
		assert.NotContains(t, s, "pw@")
		assert.NotContains(t, s, "token=x")
	})

	t.Run("a refused connection fails the script", func(t *testing.T) {
		srv, _ := recorder(t)
		url := srv.URL
		srv.Close()
		path := filepath.Join(t.TempDir(), "s.sh")
		require.NoError(t, os.WriteFile(path, script, 0o755))
		cmd := exec.Command("bash", path)
		cmd.Env = append(os.Environ(), "IDEMCHECK_PROVIDER_URL="+url)
		out, err := cmd.CombinedOutput()
		assert.Error(t, err, "%s", out)
		assert.True(t, strings.Contains(string(out), "curl"), "%s", out)
	})
}

// TestCurlScriptSendsOverlapsTogether: two creates that overlapped at the
// provider in the run are sent together by the script: a server that
// holds each POST until the other arrives (or 5 s pass) sees both at
// once. Regression: they were sent one after the other, so a failure that
// needs concurrency (no in-flight lock) could not reproduce.
func TestCurlScriptSendsOverlapsTogether(t *testing.T) {
	f := fixture()
	exs := f.History.Exchanges
	// The replay arrives (13) while the conflict is still at the provider (14).
	exs[1].ProviderSeq, exs[2].ArrivalSeq, exs[2].ProviderSeq = 14, 12, 13
	script := string(reports.CurlScript(f))
	assert.Contains(t, script, "# exchanges 2 and 3 overlapped at the provider: sent together\n")
	assert.Contains(t, script, " &\npids+=($!)\ntogether\n")

	var mu sync.Mutex // guards posts, together
	posts, together := 0, 0
	both := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			mu.Lock()
			posts++
			if posts == 2 {
				close(both)
			}
			mu.Unlock()
			select {
			case <-both:
				mu.Lock()
				together++
				mu.Unlock()
			case <-time.After(5 * time.Second):
			}
		}
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"id":"ch_000001"}`)
	}))
	t.Cleanup(srv.Close)
	runScript(t, []byte(script), "IDEMCHECK_PROVIDER_URL="+srv.URL)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 2, together, "both POSTs were at the server at once:\n%s", script)
}

// TestCurlScriptStopsWhenABackgroundSendFails: a request sent together
// with another (in the background) that fails, here because nothing
// listens, stops the script as a request sent alone does (set -e).
// Regression: the group ended with a bare wait, which returns 0 whatever
// its jobs did, so the script went on past failed requests.
func TestCurlScriptStopsWhenABackgroundSendFails(t *testing.T) {
	f := fixture()
	exs := f.History.Exchanges
	exs[1].ProviderSeq, exs[2].ArrivalSeq, exs[2].ProviderSeq = 14, 12, 13
	script := reports.CurlScript(f)
	require.Contains(t, string(script), "overlapped at the provider: sent together")
	// Stop after the group: the reference listing that follows would fail
	// on its own and hide what the group did.
	cut := strings.Index(string(script), "# The provider's charges")
	require.Positive(t, cut)
	path := filepath.Join(t.TempDir(), "failure.curl.sh")
	require.NoError(t, os.WriteFile(path, append(script[:cut:cut], "echo AFTER-THE-GROUP\n"...), 0o755))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now: connection refused
	cmd := exec.Command("bash", path)
	cmd.Env = append(os.Environ(), "IDEMCHECK_PROVIDER_URL=http://"+addr)
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "the script must fail when its requests fail:\n%s\n%s", out, script)
	assert.NotContains(t, string(out), "AFTER-THE-GROUP")
}

// TestCurlScriptUnansweredOverlapsOnlyUntilTheClientGaveUp: against a URL,
// a create whose answer the harness never saw (the client timed out after
// 1 s) is not sent together with a request that reached the provider ten
// minutes later, nor said to have been at the provider then; one that
// arrived before the client gave up still is. Regression: every next
// request was grouped with an unanswered one, however late.
func TestCurlScriptUnansweredOverlapsOnlyUntilTheClientGaveUp(t *testing.T) {
	f := fixture()
	f.Provider = "http://127.0.0.1:8080"
	exs := f.History.Exchanges
	// Exchange 2 was never answered; the client gave up 1 s after sending it.
	exs[1].ProviderDone, exs[1].ProviderSeq, exs[1].ProviderStatus, exs[1].Status = false, 0, 0, 0
	exs[1].Err, exs[1].DoneAt = "timeout", exs[1].SentAt.Add(time.Second)
	exs[2].ArrivedAt = exs[1].SentAt.Add(10 * time.Minute)
	script := string(reports.CurlScript(f))
	assert.NotContains(t, script, "overlapped at the provider: sent together", script)
	assert.NotContains(t, script, "still at the provider", script)

	exs[2].ArrivedAt = exs[1].SentAt.Add(500 * time.Millisecond)
	script = string(reports.CurlScript(f))
	assert.Contains(t, script, "# exchanges 2 and 3 overlapped at the provider: sent together\n", script)
}
