package wiremock_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/wiremock"
)

func rvPost(t *testing.T, c *http.Client, url string, keys []string, cr models.ChargeRequest) (int, string, string) {
	b, _ := json.Marshal(cr)
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/charges", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	for _, k := range keys {
		req.Header.Add(models.IdempotencyKeyHeader, k)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err.Error()
	}
	defer resp.Body.Close()
	return resp.StatusCode, resp.Header.Get(models.ReplayedHeader), readAll(t, resp)
}

func rvCharge(ref string) models.ChargeRequest {
	return models.ChargeRequest{Amount: 54890, Currency: "TRY", Source: "tok_visa", MerchantReference: ref}
}

// Regression (review of issue 3), WireMock issue #456: N concurrent POSTs with one key (a double click that reaches WireMock
// at once). Exactly one must be the processing answer; the scenario must
// have moved N times.
func TestConcurrentSameKeyReachesWireMockInTurn(t *testing.T) {
	const rounds, n = 20, 4
	firsts, lost, non201 := 0, 0, 0
	for r := 0; r < rounds; r++ {
		f := newFixture(t, wiremock.Config{}, nil)
		c := &http.Client{Transport: f.prov}
		key := `"` + uuid.NewString() + `"`
		var wg sync.WaitGroup
		var mu sync.Mutex
		fresh := 0
		start := make(chan struct{})
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				st, rep, body := rvPost(t, c, f.prov.BaseURL(), []string{key}, rvCharge("r1"))
				mu.Lock()
				defer mu.Unlock()
				if st != 201 {
					non201++
					t.Logf("round %d: status %d body %s", r, st, body)
				}
				if rep != "true" {
					fresh++
				}
			}()
		}
		close(start)
		wg.Wait()
		if fresh != 1 {
			firsts++
			t.Logf("round %d: %d responses without Idempotent-Replayed (want 1)", r, fresh)
		}
		st, err := f.prov.Server().ScenarioStates()
		if err != nil {
			t.Fatal(err)
		}
		for name, s := range st {
			if s != fmt.Sprint(n) {
				lost++
				t.Logf("round %d: scenario %s in state %q after %d requests", r, name, s, n)
			}
		}
	}
	if firsts+lost+non201 > 0 {
		t.Errorf("of %d rounds: %d with !=1 fresh answer, %d with lost transitions, %d non-201 answers", rounds, firsts, lost, non201)
	}
}

// Regression: two Idempotency-Key header lines (a middleware that Adds instead of
// Sets). The journal must still be readable.
func TestJournalReadsTwoKeyHeaders(t *testing.T) {
	f := newFixture(t, wiremock.Config{}, nil)
	c := &http.Client{Transport: f.prov}
	st, _, body := rvPost(t, c, f.prov.BaseURL(), []string{`"` + uuid.NewString() + `"`, `"` + uuid.NewString() + `"`}, rvCharge("r2"))
	t.Logf("status %d body %s", st, body)
	if _, err := f.prov.Server().Journal(); err != nil {
		t.Errorf("journal unreadable after a request with two key headers: %v", err)
	}
}

// Regression: a valid sf-string key with an escaped quote.
func TestEscapedQuotedKeyIsAccepted(t *testing.T) {
	f := newFixture(t, wiremock.Config{}, nil)
	c := &http.Client{Transport: f.prov}
	st, _, body := rvPost(t, c, f.prov.BaseURL(), []string{`"ab\"cd"`}, rvCharge("r3"))
	if st != 201 {
		t.Errorf("escaped sf-string key: status %d body %.200s, want 201", st, body)
	}
}

// Regression: a key with surrounding whitespace: the client's record vs the journal.
func TestPaddedKeyAgreesWithTheJournal(t *testing.T) {
	f := newFixture(t, wiremock.Config{}, nil)
	k := ` "` + uuid.NewString() + `" `
	req, _ := http.NewRequest(http.MethodPost, f.prov.BaseURL()+"/v1/charges", bytes.NewReader([]byte(`{"amount":1,"currency":"TRY","source":"tok_visa","merchant_reference":"r4"}`)))
	req.Header.Set(models.IdempotencyKeyHeader, k)
	resp, err := (&http.Client{Transport: f.wire}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	h := f.hist.Snapshot()
	if err := wiremock.Amend(h.Exchanges, f.journal(t)); err != nil {
		t.Errorf("padded key: Amend = %v", err)
	}
}

// Regression: one reference under two keys (first key refused before processing,
// second processed): GET by reference vs Charges().
func TestFindByReferenceSeesEveryKey(t *testing.T) {
	f := newFixture(t, wiremock.Config{}, nil)
	c := &http.Client{Transport: f.prov}
	k1, k2 := `"`+uuid.NewString()+`"`, `"`+uuid.NewString()+`"`
	// k1 declined, k2 charged, one reference: the lookup must find k2's charge.
	cr := rvCharge("r5")
	cr.Source = "tok_chargeDeclined"
	st1, _, _ := rvPost(t, c, f.prov.BaseURL(), []string{k1}, cr)
	st2, _, _ := rvPost(t, c, f.prov.BaseURL(), []string{k2}, rvCharge("r5"))
	resp, err := c.Get(f.prov.BaseURL() + "/v1/charges?merchant_reference=r5")
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, resp)
	resp.Body.Close()
	ch, _ := f.prov.Charges()
	t.Logf("POSTs %d, %d; GET %s; truth %d charges", st1, st2, body, len(ch))
	if len(ch) == 1 && !bytes.Contains([]byte(body), []byte(ch[0].ID)) {
		t.Errorf("GET by reference misses the charge the provider holds under the second key: %s", body)
	}
}
