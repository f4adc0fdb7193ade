package refprovider

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/sut/provider/redisstore"
)

func TestListenRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "10.1.2.3:0", ":0"} {
		if ln, err := Listen(addr); err == nil {
			ln.Close()
			t.Errorf("Listen(%q) accepted a non-loopback address", addr)
		}
	}
}

func TestHandlerRefusesClientMutant(t *testing.T) {
	if _, err := Handler("fresh-key-per-request", time.Hour, 0); err == nil || !strings.Contains(err.Error(), "client mutant") {
		t.Fatalf("Handler(client mutant) = %v, want a client-mutant error", err)
	}
	if _, err := Handler("no-such-mutant", time.Hour, 0); err == nil {
		t.Fatal("Handler(unknown mutant) accepted it")
	}
}

// syncBuffer lets the test read what run writes from another goroutine.
type syncBuffer struct {
	ch chan string
}

func (b *syncBuffer) Write(p []byte) (int, error) { b.ch <- string(p); return len(p), nil }

func TestServesAndReplays(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{ch: make(chan string, 1)}
	done := make(chan error, 1)
	go func() { done <- Run(ctx, "refprovider", []string{"-addr", "127.0.0.1:0"}, out) }()
	var line string
	select {
	case line = <-out.ch:
	case err := <-done:
		t.Fatalf("run ended early: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("no listening line within 30s")
	}
	base := strings.TrimSpace(strings.TrimPrefix(line, "listening on "))
	body := `{"amount":54890,"currency":"TRY","source":"tok_visa","description":"Bookstore order 1001","merchant_reference":"bookstore-1001-a"}`
	post := func() (int, string, string) {
		return postCharge(t, base, "application/json", `"01a1d96c-e23d-77bf-801e-9df969c1d378"`, body)
	}
	s1, b1, _ := post()
	s2, b2, replayed := post()
	if s1 != http.StatusCreated || s2 != s1 || b2 != b1 || replayed != "true" {
		t.Fatalf("first %d %s; second %d %s replayed=%q: want 201 twice, same body, replayed", s1, b1, s2, b2, replayed)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("server did not stop within 30s")
	}
}

// startRun runs refprovider with args until the test ends and returns its
// base URL and the lines it printed before listening.
func startRun(t *testing.T, args ...string) (base string, before []string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{ch: make(chan string, 4)}
	done := make(chan error, 1)
	go func() { done <- Run(ctx, "refprovider", append([]string{"-addr", "127.0.0.1:0"}, args...), out) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("server did not stop within 30s")
		}
	})
	for {
		select {
		case line := <-out.ch:
			if strings.HasPrefix(line, "listening on ") {
				return strings.TrimSpace(strings.TrimPrefix(line, "listening on ")), before
			}
			before = append(before, strings.TrimSpace(line))
		case err := <-done:
			t.Fatalf("run ended early: %v", err)
		case <-time.After(30 * time.Second):
			t.Fatal("no listening line within 30s")
		}
	}
}

// Regression (review of issue 5): served with the default -processing 0,
// no-inflight-lock never let two requests overlap and was certified PASS.
// refprovider now gives it 50 ms in flight, and two concurrent requests
// with one key charge twice, as the mutant should.
func TestInflightMutantGetsProcessingTime(t *testing.T) {
	base, before := startRun(t, "-mutant", "no-inflight-lock")
	if len(before) != 2 || !strings.Contains(before[0], "processing 50ms") || before[1] != "serving the provider mutant no-inflight-lock, not the reference provider" {
		t.Fatalf("printed %q before listening, want the processing time it chose and the mutant it serves", before)
	}
	body := `{"amount":100,"currency":"TRY","source":"tok_visa","description":"Bookstore order 7","merchant_reference":"bookstore-7-a"}`
	statuses := make(chan int, 2)
	for range 2 {
		go func() {
			req, _ := http.NewRequest(http.MethodPost, base+"/v1/charges", bytes.NewBufferString(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", `"01a1d96c-e23d-77bf-801e-9df969c1d999"`)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				statuses <- 0
				return
			}
			resp.Body.Close()
			statuses <- resp.StatusCode
		}()
	}
	for range 2 {
		if s := <-statuses; s != http.StatusCreated {
			t.Fatalf("a concurrent POST answered %d, want 201 from the lockless mutant", s)
		}
	}
	resp, err := http.Get(base + "/v1/charges?merchant_reference=bookstore-7-a")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if n := strings.Count(string(b), `"id":"ch_`); n != 2 {
		t.Fatalf("the mutant holds %d charges for the reference, want 2 (it has no in-flight lock): %s", n, b)
	}
}

// TestRedisStoreSurvivesARestart: with -store redis a refprovider
// restarted over the same Redis and prefix replays the first one's key
// and lists its charge (seed article 004's store outlives the process).
func TestRedisStoreSurvivesARestart(t *testing.T) {
	prefix := redisPrefix(t)
	body := `{"amount":100,"currency":"TRY","source":"tok_visa","description":"Bookstore order 8","merchant_reference":"bookstore-8-a"}`
	post := func(base string) (int, string, string) {
		return postCharge(t, base, "application/json", `"01a1d96c-e23d-77bf-801e-9df969c1d888"`, body)
	}
	var first string
	for i := range 2 {
		t.Run([]string{"first", "restarted"}[i], func(t *testing.T) {
			base, before := startRun(t, "-store", "redis", "-redis-prefix", prefix)
			if len(before) != 1 || !strings.Contains(before[0], "keys and charges in Redis") {
				t.Fatalf("printed %q before listening", before)
			}
			status, b, replayed := post(base)
			if status != http.StatusCreated || (i == 1 && (b != first || replayed != "true")) {
				t.Fatalf("POST %d %s replayed=%q (first body %s)", status, b, replayed, first)
			}
			first = b
			resp, err := http.Get(base + "/v1/charges?merchant_reference=bookstore-8-a")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			lb, _ := io.ReadAll(resp.Body)
			if n := strings.Count(string(lb), `"id":"ch_`); n != 1 {
				t.Fatalf("%d charges listed, want the one: %s", n, lb)
			}
		})
	}
}

func TestRedisMutantNeedsTheRedisStore(t *testing.T) {
	err := Run(context.Background(), "refprovider", []string{"-addr", "127.0.0.1:0", "-mutant", "redis-get-then-set"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "-store redis") {
		t.Fatalf("run = %v, want the mutant refused without -store redis", err)
	}
}

// TestHandlerServesSeveralMutants: -mutant a,b plants both bugs in one
// provider — no-fingerprint (another body under a used key is not
// refused) and replay-new-charge (a replay charges again) — so one run can
// show two distinct deviations (issue 11).
func TestHandlerServesSeveralMutants(t *testing.T) {
	h, err := Handler("no-fingerprint, replay-new-charge", time.Hour, 0)
	if err != nil {
		t.Fatal(err)
	}
	post := func(amount string) (int, string) {
		body := `{"amount":` + amount + `,"currency":"TRY","source":"tok_visa","description":"order 1","merchant_reference":"ref-1"}`
		req := httptest.NewRequest(http.MethodPost, "/v1/charges", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", `"01a1d96c-e23d-77bf-801e-9df969c1d378"`)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	s1, b1 := post("100")
	s2, b2 := post("100")
	s3, _ := post("200")
	if s1 != http.StatusCreated || s2 != http.StatusCreated || b2 == b1 {
		t.Errorf("same key and body answered %d %s, then %d %s: replay-new-charge must charge again", s1, b1, s2, b2)
	}
	if s3 == http.StatusUnprocessableEntity {
		t.Errorf("another amount under the key answered 422: no-fingerprint must not refuse it")
	}
	for _, bad := range []string{"no-fingerprint,no-fingerprint", "no-fingerprint,", "no-fingerprint,fresh-key-per-request", "no-fingerprint,nope"} {
		if _, err := Handler(bad, time.Hour, 0); err == nil {
			t.Errorf("Handler(%q) accepted it", bad)
		}
	}
}

// --key-form bare serves a provider that refuses the quoted key with 400
// and says so before listening; the bare token is charged.
func TestKeyFormBareRefusesTheQuotedKey(t *testing.T) {
	base, before := startRun(t, "--key-form", "bare")
	if len(before) != 1 || before[0] != "accepting the Idempotency-Key only as the bare form" {
		t.Fatalf("printed %q before listening, want the key form it accepts", before)
	}
	post := func(key string) int {
		t.Helper()
		body := `{"amount":100,"currency":"TRY","source":"tok_visa","description":"Bookstore order 8","merchant_reference":"bookstore-8-a"}`
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/charges", bytes.NewBufferString(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := post(`"01a1d96c-e23d-77bf-801e-9df969c1d998"`); s != http.StatusBadRequest {
		t.Fatalf("the quoted key answered %d, want 400", s)
	}
	if s := post(`01a1d96c-e23d-77bf-801e-9df969c1d998`); s != http.StatusCreated {
		t.Fatalf("the bare token answered %d, want 201", s)
	}
}

// TestServesTheStripeDialect: -dialect stripe serves the reference
// provider in Stripe's API (a form body, a bare opaque key, a 200 charge
// object, its replay), over Redis too; an unknown dialect is refused.
func TestServesTheStripeDialect(t *testing.T) {
	prefix := redisPrefix(t)
	for _, args := range [][]string{{}, {"-store", "redis", "-redis-prefix", prefix}} {
		base, before := startRun(t, append([]string{"-dialect", "stripe"}, args...)...)
		if !strings.Contains(strings.Join(before, "\n"), "speaking the stripe dialect") {
			t.Fatalf("printed %q before listening, want the dialect named", before)
		}
		post := func() (int, string, string) {
			return postCharge(t, base, "application/x-www-form-urlencoded", "1764763200123456789_Ab3dE9",
				"amount=100&currency=try&source=pm_card_visa&metadata[merchant_reference]=shop-9-a")
		}
		s1, b1, _ := post()
		s2, b2, replayed := post()
		if s1 != http.StatusOK || !strings.Contains(b1, `"object":"charge"`) || s2 != s1 || b2 != b1 || replayed != "true" {
			t.Fatalf("%v: first %d %s; second %d %s replayed=%q: want 200 twice, a charge object, replayed", args, s1, b1, s2, b2, replayed)
		}
	}
	err := Run(t.Context(), "refprovider", []string{"-addr", "127.0.0.1:0", "-dialect", "soap"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `-dialect "soap"`) {
		t.Fatalf("Run(-dialect soap) = %v, want a dialect error", err)
	}
}

// postCharge posts body (of media type ctype) under the Idempotency-Key
// value key to base's /v1/charges and returns the status, the body and
// the Idempotent-Replayed header.
func postCharge(t *testing.T, base, ctype, key, body string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/charges", strings.NewReader(body))
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Idempotency-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header.Get("Idempotent-Replayed")
}

// redisPrefix is a Redis key prefix of the test's own, cleared when it
// ends.
func redisPrefix(t *testing.T) string {
	t.Helper()
	prefix := "idemcheck-test:refprovider:" + strings.ReplaceAll(t.Name(), "/", "_") + ":" + time.Now().UTC().Format("150405.000000") + ":"
	c, err := redisstore.Connect(t.Context(), redisstore.URL())
	if err != nil {
		t.Fatal(err) // names IDEMCHECK_REDIS_URL
	}
	t.Cleanup(func() { _ = c.Close() })
	t.Cleanup(func() { // runs first
		if err := redisstore.Clear(context.Background(), c, prefix); err != nil {
			t.Error(err)
		}
	})
	return prefix
}

// -key-form belongs to the reference dialect: with -dialect stripe, whose
// keys are opaque bare tokens, it is refused before anything is served.
func TestKeyFormIsRefusedInTheStripeDialect(t *testing.T) {
	err := Run(t.Context(), "refprovider", []string{"-addr", "127.0.0.1:0", "-dialect", "stripe", "-key-form", "quoted"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `-key-form "quoted"`) {
		t.Fatalf("Run(-dialect stripe -key-form quoted) = %v, want a -key-form error", err)
	}
}
