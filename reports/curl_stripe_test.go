package reports_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/provider"
)

// A failure of a client that spoke Stripe's dialect replays the form
// bodies it sent, as it sent them (application/x-www-form-urlencoded,
// the bare key), and looks its charges up with Stripe's search: the
// script runs against the reference provider serving the stripe dialect,
// which charges the form and finds the charge.
func TestCurlScriptReplaysAStripeFormAsSent(t *testing.T) {
	f := fixture()
	const form = "amount=54890&confirm=true&currency=try&description=Bookstore+order+1&metadata[merchant_reference]=REF&payment_method=tok_visa"
	ref := f.History.Exchanges[0].MerchantReference
	for i := range f.History.Exchanges {
		ex := &f.History.Exchanges[i]
		ex.Dialect, ex.Path = models.DialectStripe, "/v1/payment_intents"
		ex.KeyHeader = "1733_visa-" + ex.Key // opaque and bare
		ex.Form = strings.Replace(form, "REF", ref, 1)
	}
	type sent struct{ target, ct, key, body string }
	var mu sync.Mutex // guards got
	var got []sent
	stripe := provider.New(provider.Config{}).Stripe()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		mu.Lock()
		got = append(got, sent{r.URL.RequestURI(), r.Header.Get("Content-Type"), r.Header.Get("Idempotency-Key"), string(body)})
		mu.Unlock()
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		stripe.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	out := runScript(t, reports.CurlScript(f), "IDEMCHECK_PROVIDER_URL="+srv.URL, "IDEMCHECK_API_KEY=sk_test_shop")

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 3, "two creates reached the provider, then one search:\n%s", out)
	for _, s := range got[:2] {
		assert.Equal(t, "/v1/payment_intents", s.target)
		assert.Equal(t, "application/x-www-form-urlencoded", s.ct)
		assert.Equal(t, f.History.Exchanges[0].Form, s.body, "the form exactly as the client sent it")
		assert.True(t, strings.HasPrefix(s.key, "1733_visa-"), "the key exactly as sent: %q", s.key)
	}
	assert.True(t, strings.HasPrefix(got[2].target, "/v1/charges/search?query="), got[2].target)
	assert.Contains(t, out, `"latest_charge":"ch_000001"`, "the form is charged in Stripe's dialect")
	assert.Contains(t, out, `"object":"search_result"`, "the search finds the reference's charges")
	assert.Contains(t, out, `"id":"ch_000001"`)
}

// A card that was not a public test card is recorded as a placeholder
// and asked of the environment, never written into the script.
func TestCurlScriptAsksForAStripeFormsOtherCard(t *testing.T) {
	f := fixture()
	for i := range f.History.Exchanges {
		ex := &f.History.Exchanges[i]
		ex.Dialect, ex.Form = models.DialectStripe, "amount=1&currency=usd&source="+models.CardPlaceholder
	}
	script := string(reports.CurlScript(f))
	assert.Contains(t, script, `'amount=1&currency=usd&source='"${IDEMCHECK_CARD_TOKEN:?set IDEMCHECK_CARD_TOKEN to the card token}"''`)
	assert.NotContains(t, script, "source="+models.CardPlaceholder)
}
