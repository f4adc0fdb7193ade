package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/client"
	"github.com/idemcheck/idemcheck/sut/provider"
)

// BenchmarkSystemsDirect is the two systems under test of the main job
// alone: the reference client's checkout (its store in memory, its
// failsafe-go pipeline) against the embedded provider's handler called
// directly, with no fault layer, no history, no checks and no rapid. One
// op is one checkout of a new order, one exchange (a create, 201); a new
// client and provider every benchSequence checkouts, as the harness builds
// them per sequence. make bench divides it by BenchmarkProviderDirect: how
// many direct handler calls of a sequence the systems under test
// themselves cost, the part of the property's cost that is not the
// harness's (issue 29).
func BenchmarkSystemsDirect(b *testing.B) {
	const benchSequence = 32 // as sut/provider's floor
	b.ReportAllocs()
	var c *client.Client
	i := 0
	for b.Loop() {
		if i%benchSequence == 0 {
			p := provider.New(provider.Config{})
			c = client.New(client.Config{
				BaseURL:    "http://provider.test",
				HTTPClient: &http.Client{Transport: handlerTransport{p}},
			}, client.NewStore())
		}
		o := c.OpenOrder(54890, "TRY")
		if res := c.Checkout(context.Background(), o.ID, "tok_visa"); res.Order.Status != models.OrderPaid {
			b.Fatalf("checkout %d: %s, HTTP %d", i, res.Outcome, res.HTTPStatus)
		}
		i++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "exchanges/s")
}

// handlerTransport calls a handler directly, as BenchmarkProviderDirect
// does: an httptest.ResponseRecorder's answer, the request's body read by
// the handler.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}
