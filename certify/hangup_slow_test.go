package certify_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// slowProvider is a provider of our own, written from docs/provider-api.md
// alone: a create takes 400 ms, a request under a key still in flight gets
// 409, a completed key replays its 201, and the lookup by reference lists
// its charges.
func slowProvider(t *testing.T) string {
	var mu sync.Mutex // guards done, inflight, charges
	done, inflight := map[string][]byte{}, map[string]bool{}
	var charges []map[string]any
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			mu.Lock()
			var data []map[string]any
			for _, c := range charges {
				if c["merchant_reference"] == r.URL.Query().Get("merchant_reference") {
					data = append(data, c)
				}
			}
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"data": append([]map[string]any{}, data...)})
			return
		}
		key := r.Header.Get("Idempotency-Key")
		raw, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
		var req map[string]any
		_ = json.Unmarshal(raw, &req)
		mu.Lock()
		if b, ok := done[key]; ok {
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write(b)
			return
		}
		if inflight[key] {
			mu.Unlock()
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusConflict)
			_, _ = w.Write([]byte(`{"title":"in flight","status":409}`))
			return
		}
		inflight[key] = true
		mu.Unlock()
		time.Sleep(400 * time.Millisecond) // processing, whatever the client does meanwhile
		mu.Lock()
		c := map[string]any{"id": fmt.Sprintf("ch_%06d", len(charges)+1), "amount": req["amount"], "currency": req["currency"],
			"status": "succeeded", "merchant_reference": req["merchant_reference"]}
		charges = append(charges, c)
		b, _ := json.Marshal(c)
		done[key] = b
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(b)
	})
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s.URL
}

// TestCertify_HangUpOnASlowCorrectProviderPasses: a provider that answers
// the hung-up create's retries 409 until it finishes, then replays it, is
// correct; hang-up-settled FAILed it ("porcupine: illegal") because the
// hung-up request's completion is never seen, so no linearization of
// "in flight, 409, replay" existed (found by a breaker's provider at
// 150 ms and more).
func TestCertify_HangUpOnASlowCorrectProviderPasses(t *testing.T) {
	cert := certifyURL(t, slowProvider(t), remote.ReferenceProfile(), certify.Options{Only: []string{certify.ReqHangUp}})
	v := verdicts(t, cert)[certify.ReqHangUp]
	for _, r := range cert.Requirements {
		require.Equal(t, reports.Pass, v, "%s: %s", r.ID, r.Reason)
	}
}
