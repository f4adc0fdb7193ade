package certify_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// cachingLayer is a provider written from docs/provider-api.md alone,
// not from sut/provider, behind a generic idempotency middleware of the
// kind the issue met: it caches the answer of any request that carries
// an Idempotency-Key, whatever its method, and fingerprints the first
// 1 KiB of the body. Safe for concurrent use.
type cachingLayer struct {
	mu      sync.Mutex
	cache   map[string]cached // by the key header's value
	charges []models.Charge
}

type cached struct {
	fingerprint [32]byte
	status      int
	body        []byte
}

func (c *cachingLayer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	key := strings.Trim(r.Header.Get(models.IdempotencyKeyHeader), `"`)
	fp := sha256.Sum256(raw[:min(len(raw), 1<<10)])
	if hit, ok := c.cache[key]; key != "" && ok {
		status, body := hit.status, hit.body
		if hit.fingerprint != fp {
			status, body = http.StatusUnprocessableEntity, []byte(`{"title":"Idempotency-Key reused with another body","status":422}`)
			w.Header().Set("Content-Type", "application/problem+json")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		_, _ = w.Write(body)
		return
	}
	status, body := c.serve(r, raw)
	if key != "" {
		if c.cache == nil {
			c.cache = map[string]cached{}
		}
		c.cache[key] = cached{fingerprint: fp, status: status, body: body}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// serve is the provider behind the middleware (c.mu held).
func (c *cachingLayer) serve(r *http.Request, raw []byte) (int, []byte) {
	if r.Method == http.MethodGet {
		list := models.ChargeList{Data: []models.Charge{}}
		for _, ch := range c.charges {
			if ch.MerchantReference == r.URL.Query().Get("merchant_reference") {
				list.Data = append(list.Data, ch)
			}
		}
		b, _ := json.Marshal(list)
		return http.StatusOK, b
	}
	var req models.ChargeRequest
	if json.NewDecoder(bytes.NewReader(raw)).Decode(&req) != nil {
		return http.StatusBadRequest, []byte(`{"title":"Bad Request","status":400}`)
	}
	ch := models.Charge{ID: fmt.Sprintf("ch_c%06d", len(c.charges)+1), Amount: req.Amount, Currency: req.Currency, Status: "succeeded", MerchantReference: req.MerchantReference}
	c.charges = append(c.charges, ch)
	b, _ := json.Marshal(ch)
	return http.StatusCreated, b
}

// Against a provider idemcheck did not write whose idempotency layer
// caches keyed lookups and fingerprints a body's first 1 KiB, the keyed
// lookup and the large body FAIL with the reasons the mutants
// keyed-lookup-cached and fingerprint-prefix-only get.
func TestCertify_EdgesAgainstACachingLayerOnLoopback(t *testing.T) {
	s := httptest.NewServer(&cachingLayer{})
	t.Cleanup(s.Close)
	prof := remote.DraftProfile(remote.DialectReference)
	cert := certifyURL(t, s.URL, prof, certify.Options{Only: []string{certify.ReqKeyedLookup, certify.ReqLargeBody}})
	verdicts(t, cert)
	got := byID(cert)
	for id, says := range map[string]string{
		certify.ReqKeyedLookup: "answered from an idempotency cache",
		certify.ReqLargeBody:   "the fingerprint does not cover the whole body",
	} {
		assert.Equal(t, reports.Fail, got[id].Verdict, "%s: %s", id, got[id].Reason)
		assert.Contains(t, got[id].Reason, says, id)
		assert.NotEmpty(t, got[id].Evidence, id)
	}
}
