package remote_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// The stripe dialect sends a docs/provider-api.md refund as Stripe's form-encoded
// POST /v1/refunds under the bare key, maps its answers back (200 → 201
// refund; 400 amount_too_large → 402; 400 idempotency_error → 422), and
// finds refunds by filtering GET /v1/refunds on the metadata.
func TestStripeDialect_Refunds(t *testing.T) {
	var mu sync.Mutex
	var forms []url.Values
	var keys []string
	answer := `{"id":"re_1","object":"refund","charge":"ch_1","amount":500,"status":"succeeded","metadata":{"merchant_reference":"ref-1"}}`
	status := http.StatusOK
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodGet {
			assert.Equal(t, "/v1/refunds", r.URL.Path)
			_, _ = io.WriteString(w, `{"data":[`+answer+`,{"id":"re_2","charge":"ch_1","amount":1,"status":"succeeded","metadata":{"merchant_reference":"other"}}]}`)
			return
		}
		_ = r.ParseForm()
		mu.Lock()
		forms, keys = append(forms, r.PostForm), append(keys, r.Header.Get(models.IdempotencyKeyHeader))
		st, body := status, answer
		mu.Unlock()
		if st != http.StatusOK {
			body = map[int]string{
				http.StatusBadRequest: `{"error":{"type":"invalid_request_error","code":"amount_too_large","message":"echo"}}`,
				http.StatusConflict:   `{"error":{"type":"idempotency_error","message":"echo"}}`,
			}[st]
			if st == http.StatusConflict {
				st = http.StatusBadRequest
			}
			w.WriteHeader(st)
		}
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(s.Close)
	p, err := remote.New(remote.Config{BaseURL: s.URL, Dialect: remote.DialectStripe, Profile: remote.StripeMockProfile()})
	require.NoError(t, err)
	send := func() *http.Response {
		b, _ := json.Marshal(models.RefundRequest{Charge: "ch_1", Amount: 500, MerchantReference: "ref-1"})
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://provider/v1/refunds", strings.NewReader(string(b)))
		req.Header.Set(models.IdempotencyKeyHeader, `"k-1"`)
		resp, err := p.Transport().RoundTrip(req)
		require.NoError(t, err)
		t.Cleanup(func() { _ = resp.Body.Close() })
		return resp
	}
	resp := send()
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	var re models.Refund
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&re))
	assert.Equal(t, models.Refund{ID: "re_1", Charge: "ch_1", Amount: 500, Status: "succeeded", MerchantReference: "ref-1"}, re)
	mu.Lock()
	assert.Equal(t, "ch_1", forms[0].Get("charge"))
	assert.Equal(t, "500", forms[0].Get("amount"))
	assert.Equal(t, "ref-1", forms[0].Get("metadata[merchant_reference]"))
	assert.Equal(t, "k-1", keys[0], "the bare key")
	mu.Unlock()

	setStatus := func(st int) {
		mu.Lock()
		defer mu.Unlock()
		status = st
	}
	setStatus(http.StatusBadRequest)
	assert.Equal(t, http.StatusPaymentRequired, send().StatusCode)
	setStatus(http.StatusConflict) // the stub answers 400 idempotency_error
	resp = send()
	assert.Equal(t, http.StatusUnprocessableEntity, resp.StatusCode)
	b, _ := io.ReadAll(resp.Body)
	assert.NotContains(t, string(b), "echo", "the provider's message is never copied")

	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://provider/v1/refunds?merchant_reference=ref-1", nil)
	resp, err = p.Transport().RoundTrip(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var list models.RefundList
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&list))
	require.Len(t, list.Data, 1)
	assert.Equal(t, "re_1", list.Data[0].ID)
}
