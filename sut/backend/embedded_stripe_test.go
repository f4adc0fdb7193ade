package backend_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/stripe/stripe-go/v82"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/backend"
	"github.com/idemcheck/idemcheck/sut/stripewire"
)

// The embedded provider serving Stripe's API to stripe-go through the
// fault layer, as CheckClient wires it with WithDialect("stripe"): the
// history records the SDK's form (reference, amount, currency, card,
// fingerprint, the form itself) and its opaque key; a PaymentIntent's
// charge is its latest_charge; and a status fault answers in Stripe's
// error JSON, which the SDK reads as an api_error and does not retry
// (with problem details it found no error it knew, and retried).
func TestEmbeddedServesStripeThroughTheFaultLayer(t *testing.T) {
	hist := models.NewHistory()
	e := backend.NewEmbedded(0, 24*time.Hour, nil, hist, time.Now)
	e.ServeStripe()
	tr := faults.NewTransport(e.Wire(), hist, []faults.Fault{{Kind: faults.KindPass}, {Kind: faults.KindStatus503}})
	tr.Dialect = stripewire.Recorder{}
	sc := stripe.NewClient("sk_test_shop", stripe.WithBackends(stripe.NewBackendsWithConfig(&stripe.BackendConfig{
		URL: stripe.String(e.BaseURL()), HTTPClient: &http.Client{Transport: tr}, LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull}})))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	params := func(ref string) *stripe.PaymentIntentCreateParams {
		p := &stripe.PaymentIntentCreateParams{Amount: stripe.Int64(54890), Currency: stripe.String("try"), PaymentMethod: stripe.String("pm_card_visa"),
			Confirm: stripe.Bool(true), Description: stripe.String("Bookstore order 1"), Metadata: map[string]string{"merchant_reference": ref}}
		p.SetIdempotencyKey("order-1_" + ref)
		return p
	}
	pi, err := sc.V1PaymentIntents.Create(ctx, params("bookstore-1-a"))
	require.NoError(t, err)
	_, err = sc.V1PaymentIntents.Create(ctx, params("bookstore-1-b"))
	var se *stripe.Error
	require.True(t, errors.As(err, &se), "%v", err)
	assert.Equal(t, stripe.ErrorTypeAPI, se.Type)
	assert.Equal(t, http.StatusServiceUnavailable, se.HTTPStatusCode)

	exs := hist.Snapshot().Exchanges
	require.Len(t, exs, 2, "the SDK did not retry the injected 503")
	ex := exs[0]
	assert.Equal(t, models.DialectStripe, ex.Dialect)
	assert.Equal(t, "order-1_bookstore-1-a", ex.Key)
	assert.Equal(t, "bookstore-1-a", ex.MerchantReference)
	assert.Equal(t, int64(54890), ex.Amount)
	assert.Equal(t, "TRY", ex.Currency)
	assert.Equal(t, "visa", ex.Card)
	assert.Equal(t, models.Fingerprint(models.ChargeRequest{Amount: 54890, Currency: "TRY", Source: "tok_visa",
		Description: "Bookstore order 1", MerchantReference: "bookstore-1-a"}), ex.Fingerprint)
	assert.Contains(t, ex.Form, "payment_method=pm_card_visa")
	assert.Equal(t, pi.LatestCharge.ID, ex.ChargeID, "the intent's charge")
	assert.Equal(t, pi.LatestCharge.ID, ex.ProviderChargeID)
	charges, err := e.Charges()
	require.NoError(t, err)
	require.Len(t, charges, 1)
	assert.Equal(t, charges[0].ID, ex.ChargeID)
}
