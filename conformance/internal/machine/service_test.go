package machine

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/checkout"
	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/sut/service"
)

// hostile is a service that places orders as docs/client-api.md says and
// checks out as checkout says.
func hostile(checkout http.HandlerFunc) service.Launcher {
	return func(context.Context, string) (string, func(), error) {
		mux := http.NewServeMux()
		mux.HandleFunc("POST /orders", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{"id": 1}`))
		})
		mux.HandleFunc("POST /orders/{id}/checkout", checkout)
		s := httptest.NewServer(mux) // 127.0.0.1:0
		return s.URL, s.Close, nil
	}
}

// A service that hangs, panics or answers garbage gets a client-api
// verdict with a fixed message, within its call timeout, never a hang.
func TestHostileServiceGetsAVerdict(t *testing.T) {
	for name, tc := range map[string]struct {
		checkout http.HandlerFunc
		want     string
	}{
		"hangs": {func(_ http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body) // then the server sees the harness hang up, and Close ends
			<-r.Context().Done()
		},
			"client-api: a checkout got no answer within 300ms"},
		"panics": {func(http.ResponseWriter, *http.Request) { panic("boom") },
			"client-api: a checkout lost the connection before a whole answer (the service crashed or panicked)"},
		"answers garbage": {func(w http.ResponseWriter, _ *http.Request) {
			c, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				_, _ = c.Write([]byte("OK PAID\r\n\r\n"))
				_ = c.Close()
			}
		}, "client-api: a checkout got an answer that is not HTTP"},
		"answers another status": {func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) },
			"client-api: a checkout answered HTTP 418, not 200, 202, 402, 409 or 503"},
	} {
		t.Run(name, func(t *testing.T) {
			cfg, err := Config{}.WithDefaults()
			require.NoError(t, err)
			// Only the hang waits out its call timeout; the others end on
			// their own cause, long before a generous one (a short one could
			// cut them first on a busy machine: issue 22).
			timeout := time.Minute
			if name == "hangs" {
				timeout = 300 * time.Millisecond
			}
			cfg.Under = &UnderTest{Launch: hostile(tc.checkout), CallTimeout: timeout}
			w, err := NewWorld(cfg, nil)
			require.NoError(t, err)
			defer w.Close()
			require.True(t, w.loopback && w.real, "a service runs against the loopback provider in real time")
			res := w.checkout(w.cli, "shopper", w.openOrder("shopper", 1000, "EUR"), "visa")
			assert.Equal(t, checkout.Failed, res.Outcome)
			v := w.contractViolation()
			require.NotNil(t, v)
			assert.Equal(t, tc.want, v.Message)
		})
	}
}

// Regression (found by examples/checkout-service's TestServiceOverHTTP):
// a service that hangs up on the provider while it is still charging — a
// crash, its attempt timeout — must find the charge once time has passed;
// the loopback provider finishes the request before the run's clock jumps.
// Before the fix, the final reconciliation asked while the provider was
// still charging, abandoned the attempt, and the charge landed after it
// (books-balance).
func TestLoopbackProviderFinishesBeforeTimeJumps(t *testing.T) {
	launch := func(_ context.Context, provider string) (string, func(), error) {
		mux := http.NewServeMux()
		mux.HandleFunc("POST /orders", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{"id": 1}`))
		})
		mux.HandleFunc("POST /orders/{id}/checkout", func(w http.ResponseWriter, r *http.Request) {
			ctx, cancel := context.WithTimeout(r.Context(), 20*time.Millisecond) // gives up long before the provider answers
			defer cancel()
			body := `{"amount":1000,"currency":"EUR","source":"tok_visa","description":"Bookstore order 1","merchant_reference":"bookstore-1-0190a6e27c3b7d4e8f5a1b2c3d4e5f60"}`
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, provider+"/v1/charges", strings.NewReader(body))
			req.Header.Set("Idempotency-Key", `"0190a6e2-7c3b-7d4e-8f5a-1b2c3d4e5f61"`)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				_ = resp.Body.Close()
			}
			w.WriteHeader(http.StatusAccepted)
		})
		s := httptest.NewServer(mux)
		return s.URL, s.Close, nil
	}
	cfg, err := Config{}.WithDefaults()
	require.NoError(t, err)
	cfg.Under = &UnderTest{Launch: launch}
	w, err := NewWorld(cfg, nil)
	require.NoError(t, err)
	defer w.Close()
	w.faults.Schedule([]faults.Fault{{Kind: faults.KindSlowProcessing, Delay: w.scale(15 * time.Second)}})
	res := w.checkout(w.cli, "shopper", w.openOrder("shopper", 1000, "EUR"), "visa")
	require.Equal(t, checkout.Pending, res.Outcome)
	w.advance(31 * time.Minute) // a time-passes step: the provider first answers what reached it
	charges, err := w.prov.Charges()
	require.NoError(t, err)
	assert.Len(t, charges, 1, "the provider was still charging when time jumped")
}
