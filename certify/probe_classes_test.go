package certify_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/provider/server"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// With keys optional (key_required: false), missing-key-refused is NOT
// OFFERED and says how many times a keyless create and its retry charged:
// against key-optional, twice. The reference, which refuses keyless
// creates, is PASS under that profile: it requires keys although the
// profile does not say so. Before issue 25 both were NOT JUDGED.
func TestCertify_KeysOptionalShowsTheKeylessRetryCharges(t *testing.T) {
	prof := remote.ReferenceProfile()
	prof.KeyRequired = false
	only := certify.Options{Only: []string{certify.ReqMissingKey}}
	r := byID(certifyURL(t, startRef(t, "key-optional", 0, 0), prof, only))[certify.ReqMissingKey]
	assert.Equal(t, reports.NotOffered, r.Verdict, r.Reason)
	assert.Contains(t, r.Reason, "answered 201 ch_000002, 201 ch_000003; lookup by merchant reference found 2 charges: a keyless retry charged again (2 charges for one payment)")
	assert.Len(t, r.Evidence, 3)
	ref := byID(certifyURL(t, startRef(t, "", 0, 0), prof, only))[certify.ReqMissingKey]
	assert.Equal(t, reports.Pass, ref.Verdict, ref.Reason)
	assert.Contains(t, ref.Reason, "keys are required although profile")
}

// contractLayer is a provider written only against docs/provider-api.md,
// not ours, wrapped the way issue 25's third-party layers were: its
// idempotency middleware runs before the router, takes the header value
// as the key (quotes trimmed, an empty value a key too) and marks it in
// flight, and releases it only when a handler stores a 201. The router's
// own 404 is Go's plain-text page.
func contractLayer(t *testing.T) string {
	var mu sync.Mutex
	inflight := map[string]bool{}
	stored := map[string][]byte{}
	var charges []map[string]any
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.Method == http.MethodGet && r.URL.Path == "/v1/charges" {
			data := []map[string]any{}
			for _, c := range charges {
				if c["merchant_reference"] == r.URL.Query().Get("merchant_reference") {
					data = append(data, c)
				}
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"data": data})
			return
		}
		vs, keyed := r.Header["Idempotency-Key"]
		key := ""
		if keyed {
			key = strings.Trim(vs[0], `"`)
			if b, ok := stored[key]; ok {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(b)
				return
			}
			if inflight[key] {
				w.Header().Set("Content-Type", "application/problem+json")
				w.WriteHeader(http.StatusConflict)
				_, _ = w.Write([]byte(`{"title":"Conflict","status":409}`))
				return
			}
			inflight[key] = true
		}
		if r.Method != http.MethodPost || r.URL.Path != "/v1/charges" {
			http.NotFound(w, r)
			return
		}
		var req map[string]any
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&req); err != nil {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"title":"Bad Request","status":400}`))
			return
		}
		c := map[string]any{"id": fmt.Sprintf("ch_%06d", len(charges)+1), "amount": req["amount"], "currency": req["currency"],
			"status": "succeeded", "merchant_reference": req["merchant_reference"]}
		charges = append(charges, c)
		b, _ := json.Marshal(c)
		if keyed {
			stored[key] = b
			delete(inflight, key)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(b)
	}))
	t.Cleanup(s.Close)
	return s.URL
}

// Against contractLayer, the requirements of issue 25's key classes fail
// as against the mutants that plant its bugs in our provider
// (key-stuck-after-error, empty-key-shared, framework-errors-plain): the
// key left in flight by the 404, the empty key shared by two customers,
// the plain-text 404.
func TestCertify_ContractLayerFailsTheKeyClasses(t *testing.T) {
	ids := []string{certify.ReqKeyBlocked, certify.ReqEmptyKey, certify.ReqProblemDetails}
	cert := certifyURL(t, contractLayer(t), remote.ReferenceProfile(), certify.Options{Only: ids})
	got := byID(cert)
	for id, wants := range map[string][]string{
		certify.ReqKeyBlocked: { // both cases are sent and listed
			"answered 404 under a new key, the same key with a valid create answered 409 on all 5 tries",
			"after a create whose body does not parse answered 400 under a new key, the same key with a valid create answered 409",
		},
		certify.ReqEmptyKey:       {"the empty value is one key shared by every client"},
		certify.ReqProblemDetails: {`a request for an unknown path answered 404 with Content-Type "text/plain; charset=utf-8"`},
	} {
		r := got[id]
		require.Equal(t, reports.Fail, r.Verdict, "%s: %s", id, r.Reason)
		for _, want := range wants {
			assert.Contains(t, r.Reason, want, id)
		}
		assert.NotEmpty(t, r.Evidence, id)
	}
}

// errors-are-problem-details judges every error answer the run saw
// before it, not only the 400, 409 and 422 it provokes: behind a gateway
// that answers refunds 417 text/html, the reference provider FAILs it,
// the 417 named and in its evidence. Before issue 25 it PASSed: a 417
// was never looked at.
func TestCertify_ProblemDetailsJudgesEveryErrorSeen(t *testing.T) {
	h, err := server.Handler("", 0, 0)
	require.NoError(t, err)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/v1/refunds" {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusExpectationFailed)
			_, _ = w.Write([]byte("<html><body>417 Expectation Failed</body></html>"))
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	cert := certifyURL(t, s.URL, remote.ReferenceProfile(), certify.Options{Only: []string{certify.ReqRefundReplay, certify.ReqProblemDetails}})
	r := byID(cert)[certify.ReqProblemDetails]
	require.Equal(t, reports.Fail, r.Verdict, r.Reason)
	assert.Contains(t, r.Reason, `error answers of other requirements are not application/problem+json: 417 POST (Content-Type "text/html")`)
	var shown bool
	for _, e := range r.Evidence {
		shown = shown || e.ProviderStatus == http.StatusExpectationFailed
	}
	assert.True(t, shown, "the 417 is in the evidence")
}
