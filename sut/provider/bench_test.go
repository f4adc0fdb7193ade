package provider_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/provider"
)

// The floor of make bench (docs/BENCHMARKS.md): what the embedded
// provider costs per exchange, without the harness around it. Every
// exchange is a POST /v1/charges: even ones create a charge under a key
// of their own (201), odd ones replay the key before (201, replayed), the
// pair a client retry makes. A new provider every benchSequence exchanges
// keeps its key store the size one drawn sequence leaves (the harness
// builds a provider per sequence), and its creation is part of the cost.

// benchSequence is how many exchanges one provider serves before the next
// replaces it: about three sequences of the main job (≈10 exchanges each).
const benchSequence = 32

// benchKeys are the keys one provider sees, as Structured Field Strings.
var benchKeys = func() []string {
	keys := make([]string, benchSequence/2)
	for i := range keys {
		keys[i] = strconv.Quote(uuid.NewString())
	}
	return keys
}()

// benchBody is a charge request body; its merchant reference is one per
// key in a real run, which the provider does not look at on a create.
var benchBody = []byte(`{"amount":54890,"currency":"TRY","source":"tok_visa","description":"Bookstore order 1001","merchant_reference":"bookstore-1001-a"}`)

// benchRequest is exchange i of a provider's benchSequence: a create or
// the replay of the one before.
func benchRequest(b *testing.B, url string, i int) *http.Request {
	r, err := http.NewRequest(http.MethodPost, url+"/v1/charges", bytes.NewReader(benchBody))
	if err != nil {
		b.Fatal(err)
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer sk_test_secret")
	r.Header.Set(models.IdempotencyKeyHeader, benchKeys[(i%benchSequence)/2])
	return r
}

// BenchmarkProviderDirect is the embedded provider's handler called
// directly (ServeHTTP with an httptest.ResponseRecorder): one op is one
// exchange; exchanges/s is its rate, the floor the harness is measured
// against.
func BenchmarkProviderDirect(b *testing.B) {
	b.ReportAllocs()
	var p *provider.Provider
	i := 0
	for b.Loop() {
		if i%benchSequence == 0 {
			p = provider.New(provider.Config{})
		}
		w := httptest.NewRecorder()
		p.ServeHTTP(w, benchRequest(b, "http://provider.test", i))
		if w.Code != http.StatusCreated {
			b.Fatalf("exchange %d: %d %s", i, w.Code, w.Body)
		}
		i++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "exchanges/s")
}

// BenchmarkProviderLoopback is the same exchanges over a loopback
// httptest.Server (127.0.0.1, an ephemeral port) with one keep-alive
// connection: what HTTP and the loopback add to the floor.
func BenchmarkProviderLoopback(b *testing.B) {
	b.ReportAllocs()
	var p atomic.Pointer[provider.Provider]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { p.Load().ServeHTTP(w, r) }))
	defer srv.Close()
	cli := srv.Client()
	i := 0
	for b.Loop() {
		if i%benchSequence == 0 {
			p.Store(provider.New(provider.Config{}))
		}
		resp, err := cli.Do(benchRequest(b, srv.URL, i))
		if err != nil {
			b.Fatal(err)
		}
		_, err = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		_ = resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusCreated {
			b.Fatalf("exchange %d: %d %v", i, resp.StatusCode, err)
		}
		i++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "exchanges/s")
}
