// Package stranger is a provider of the reference dialect written apart
// from sut/provider, on loopback, as an outside team might write one, for
// the tests of verdicts against code idemcheck did not write: creates are
// keyed by the Idempotency-Key (quoted or bare: one key; and, in RawURL
// mode, by the raw request URL too), another body under a stored key is
// refused with 422, lookups are by merchant reference. It counts what it
// received. A Provider is safe for concurrent use.
package stranger

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/models"
)

// Mode is how a Provider answers creates.
type Mode int

// The modes.
const (
	// Forgetful stores each key's first 201 and replays it until Forget
	// has passed since it was stored; then the key is new again.
	Forgetful Mode = iota
	// RawURL stores each key's first 201 forever, but keys its store by
	// the raw request URL beside the key: a trailing slash or a query
	// parameter is a new request that charges again. Deterministic.
	RawURL
	// Declines answers every create 402 with a card_declined body and
	// stores nothing.
	Declines
	// Phantom answers every create 201 with a charge body but creates
	// nothing: lookups find no charge.
	Phantom
	// Broken answers every create 500.
	Broken
)

// Provider is the stranger's provider. Mode and Forget are read, not
// written, once it serves.
type Provider struct {
	Mode   Mode
	Forget time.Duration // Forgetful: how long a stored key is kept

	mu      sync.Mutex
	keys    map[string]stored
	charges []models.Charge
	posts   int
	gets    int
}

type stored struct {
	at   time.Time
	req  models.ChargeRequest // the first request's content: another under the key is a 422
	body []byte
}

// Start serves p on 127.0.0.1:0 until the test ends and returns its base
// URL.
func Start(t testing.TB, p *Provider) string {
	t.Helper()
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return srv.URL
}

// Received is how many creates (POST) and lookups (GET) p got.
func (p *Provider) Received() (posts, gets int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.posts, p.gets
}

// Charges is how many charges p created.
func (p *Provider) Charges() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.charges)
}

const declineBody = `{"error":{"type":"card_error","code":"card_declined","decline_code":"insufficient_funds"}}`

// ServeHTTP answers GET /v1/charges?merchant_reference= with the charges
// of that reference and any POST as its Mode says; a body over 64 KiB or
// not JSON is a 400.
func (p *Provider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if r.Method == http.MethodGet {
		p.gets++
		ref := r.URL.Query().Get("merchant_reference")
		list := models.ChargeList{Data: []models.Charge{}}
		for _, c := range p.charges {
			if c.MerchantReference == ref {
				list.Data = append(list.Data, c)
			}
		}
		_ = json.NewEncoder(w).Encode(list)
		return
	}
	p.posts++
	var req models.ChargeRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&req); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":{"type":"invalid_request_error"}}`))
		return
	}
	charge := models.Charge{ID: fmt.Sprintf("ch_s%06d", p.posts), Amount: req.Amount, Currency: req.Currency, Status: "succeeded", MerchantReference: req.MerchantReference}
	switch p.Mode {
	case Declines:
		w.WriteHeader(http.StatusPaymentRequired)
		_, _ = w.Write([]byte(declineBody))
		return
	case Phantom:
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(charge)
		return
	case Broken:
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"error":{"type":"api_error"}}`))
		return
	}
	key := strings.Trim(r.Header.Get(models.IdempotencyKeyHeader), `"`) // the quoted and the bare key are one
	if p.Mode == RawURL {
		key += " " + r.URL.RequestURI()
	}
	if st, ok := p.keys[key]; ok && (p.Mode == RawURL || time.Since(st.at) < p.Forget) {
		if st.req != req {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusUnprocessableEntity)
			_, _ = w.Write([]byte(`{"title":"Idempotency-Key reused with another body","status":422}`))
			return
		}
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(st.body)
		return
	}
	p.charges = append(p.charges, charge)
	b, _ := json.Marshal(charge)
	if p.keys == nil {
		p.keys = map[string]stored{}
	}
	p.keys[key] = stored{at: time.Now(), req: req, body: b}
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write(b)
}
