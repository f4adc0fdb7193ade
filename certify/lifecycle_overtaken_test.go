package certify_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// locklessProvider is a provider written from docs/provider-api.md alone
// that keeps no key store: every create is processed (300 ms) and
// charged. The first create of slow-create-retry-charges-once is answered
// 409 at once, as when its retry reaches the provider first on a loaded
// machine (two connections swap) and holds the key.
type locklessProvider struct {
	mu        sync.Mutex
	charges   []map[string]any
	overtook  bool
	overtakes int
}

func (p *locklessProvider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.Method == http.MethodGet {
		ref := r.URL.Query().Get("merchant_reference")
		p.mu.Lock()
		list := []map[string]any{}
		for _, c := range p.charges {
			if c["merchant_reference"] == ref {
				list = append(list, c)
			}
		}
		p.mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]any{"data": list})
		return
	}
	var req map[string]any
	if json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&req) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	ref, _ := req["merchant_reference"].(string)
	p.mu.Lock()
	first := strings.Contains(ref, "-slow") && !p.overtook
	if first {
		p.overtook, p.overtakes = true, p.overtakes+1
	}
	p.mu.Unlock()
	if first {
		w.Header().Set("Content-Type", "application/problem+json")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusConflict)
		_, _ = w.Write([]byte(`{"title":"in flight","status":409}`))
		return
	}
	select {
	case <-time.After(300 * time.Millisecond):
	case <-r.Context().Done():
		return
	}
	p.mu.Lock()
	c := map[string]any{"id": fmt.Sprintf("ch_%06d", len(p.charges)+1), "amount": req["amount"], "currency": req["currency"],
		"status": "succeeded", "merchant_reference": ref}
	p.charges = append(p.charges, c)
	p.mu.Unlock()
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(c)
}

// Regression (the lifecycle requirement under load, TestLifecycleRedisMutantsFail
// in a full run): a first create answered 409 because its retry overtook
// it left slow-create-retry-charges-once NOT JUDGED ("answered (409) ...
// before a retry could be sent"), so a provider without an in-flight lock
// passed unjudged. It now tries again under a new key and FAILs it.
func TestCertify_SlowCreateOvertakenTriesAgain(t *testing.T) {
	p := &locklessProvider{}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	prof := remote.ReferenceProfile()
	prof.Lifecycle.Lease = remote.Span(2 * time.Second)
	cert := certifyURL(t, srv.URL, prof, certify.Options{Only: []string{certify.ReqSlowCreate}})
	v := verdicts(t, cert)
	assert.Equal(t, reports.Fail, v[certify.ReqSlowCreate])
	assert.Equal(t, 1, p.overtakes)
	for _, r := range cert.Requirements {
		if r.ID == certify.ReqSlowCreate {
			assert.Contains(t, r.Reason, "overtaken by their retry")
		}
	}
}
