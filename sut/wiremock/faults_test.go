package wiremock_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/client"
	"github.com/idemcheck/idemcheck/sut/wiremock"
	gowiremock "github.com/wiremock/go-wiremock"
)

// Each of WireMock's four faults, cutting every try after the provider
// processed it, reaches the client as an unknown outcome: the checkout
// answers 202, the attempt stays Open and the order PaymentPending, never
// Declined — while the provider does hold the charge, which reconciliation
// then finds.
func TestWireMockFaultsAreUnknownOutcomes(t *testing.T) {
	for _, wf := range wiremock.WireFaults {
		t.Run(string(wf), func(t *testing.T) {
			f := newFixture(t, wiremock.Config{WireFault: func(int) gowiremock.Fault { return wf }}, nil)
			f.wire.Schedule(repeat(faults.Fault{Kind: faults.KindLoseResponse}, 10))
			res := f.checkout("tok_visa")
			if res.HTTPStatus != http.StatusAccepted || res.Outcome == client.OutcomeDeclined {
				t.Fatalf("checkout answered %d (%s), want 202 PaymentPending", res.HTTPStatus, res.Outcome)
			}
			as := f.store.Attempts()
			if len(as) != 1 || as[0].Status != models.AttemptOpen {
				t.Fatalf("attempts %+v: want one, Open", as)
			}
			if o, _ := f.store.Order(res.Order.ID); o.Status != models.OrderPaymentPending {
				t.Fatalf("order is %s, want PaymentPending", o.Status)
			}
			for _, e := range f.hist.Snapshot().Exchanges {
				if e.Err == "" || e.Status != 0 {
					t.Errorf("exchange %d: the client got status %d, error %q; want a transport error", e.ID, e.Status, e.Err)
				}
			}
			charges, err := f.prov.Charges()
			if err != nil {
				t.Fatal(err)
			}
			if len(charges) != 1 {
				t.Fatalf("provider holds %d charges, want the 1 it processed before the fault", len(charges))
			}
			f.wire.Schedule(nil)
			f.reconcileLater(t)
			if o, _ := f.store.Order(res.Order.ID); o.Status != models.OrderPaid || o.ProviderChargeID != charges[0].ID {
				t.Fatalf("after reconciliation the order is %s with %q, want Paid with %s", o.Status, o.ProviderChargeID, charges[0].ID)
			}
		})
	}
}

// The imitation itself: replay, mismatch, missing key, and the journal as
// the record of what crossed the wire.
func TestProviderContract(t *testing.T) {
	f := newFixture(t, wiremock.Config{}, nil)
	base := f.prov.BaseURL()
	hc := &http.Client{Transport: f.wire, Timeout: 10 * time.Second}
	body := `{"amount":54890,"currency":"TRY","source":"tok_visa","description":"Bookstore order 1","merchant_reference":"bookstore-1-a"}`
	other := `{"amount":100,"currency":"TRY","source":"tok_visa","description":"Bookstore order 1","merchant_reference":"bookstore-1-a"}`
	post := func(key, b string) (int, string, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/charges", stringsReader(b))
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set(models.IdempotencyKeyHeader, key)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		return resp.StatusCode, readAll(t, resp), resp.Header.Get(models.ReplayedHeader)
	}
	const k = "01a1d96c-e23d-77bf-801e-9df969c1d378"
	s1, b1, _ := post(`"`+k+`"`, body)
	s2, b2, r2 := post(k, body) // the bare token is the same key
	s3, _, _ := post(`"`+k+`"`, other)
	s4, _, _ := post("", body)
	if s1 != 201 || s2 != 201 || b2 != b1 || r2 != "true" {
		t.Errorf("first %d %s, replay %d %s (replayed %q): want 201 twice, same body, replayed", s1, b1, s2, b2, r2)
	}
	if s3 != 422 || s4 != 400 {
		t.Errorf("mismatch answered %d (want 422), missing key %d (want 400)", s3, s4)
	}
	charges, err := f.prov.Charges()
	if err != nil || len(charges) != 1 {
		t.Fatalf("charges %v, %v: want exactly one", charges, err)
	}
	j := f.journal(t)
	if len(j) != 4 || j[0].KeyHeader != `"`+k+`"` || j[1].KeyHeader != k || j[3].HasKey {
		t.Fatalf("journal %+v: want the 4 requests with their key headers as sent", j)
	}
	for i, e := range j {
		if e.Exchange != i+1 {
			t.Errorf("journal entry %d carries exchange id %d, want %d", i, e.Exchange, i+1)
		}
	}
}

// A reset reaches the client as a reset, once: net/http resends a request
// that carries an Idempotency-Key when a reused keep-alive connection is
// cut, which would hide the fault behind a second request WireMock sees.
// The Provider's transport therefore keeps no connections alive.
func TestResetIsNotSilentlyResent(t *testing.T) {
	f := newFixture(t, wiremock.Config{}, func(c *client.Config) { c.MaxRetries = -1 })
	f.wire.Schedule([]faults.Fault{{Kind: faults.KindPass}, {Kind: faults.KindReset}})
	f.checkout("tok_visa") // a connection is made, and could be kept
	res := f.checkout("tok_visa")
	if res.HTTPStatus != http.StatusAccepted {
		t.Errorf("checkout under a reset answered %d (%s), want 202", res.HTTPStatus, res.Outcome)
	}
	if j := posts(f.journal(t)); len(j) != 2 {
		t.Fatalf("WireMock saw %d POSTs for 2 sends: %+v", len(j), j)
	}
}
