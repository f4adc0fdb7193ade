package provider_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/stripe/stripe-go/v82"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/provider"
)

// sdk is a stripe-go v82 client of the reference provider served in the
// stripe dialect, as a checkout team builds it: only the base URL and the
// HTTP client are the test's; no network retries, so each call is one
// request.
func sdk(t *testing.T) (*stripe.Client, *provider.Provider) {
	t.Helper()
	p := provider.New(provider.Config{})
	srv := httptest.NewServer(p.Stripe())
	t.Cleanup(srv.Close)
	cfg := &stripe.BackendConfig{URL: stripe.String(srv.URL), HTTPClient: srv.Client(), MaxNetworkRetries: stripe.Int64(0),
		LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull}}
	return stripe.NewClient("sk_test_shop", stripe.WithBackends(stripe.NewBackendsWithConfig(cfg))), p
}

// stripe-go reads every answer of the served dialect as it reads
// Stripe's: a charge and its replay (Idempotent-Replayed), Stripe's error
// types for a reused key and a decline, search by metadata, a confirmed
// PaymentIntent naming its charge, and a refund.
func TestStripe_SDK(t *testing.T) {
	c, p := sdk(t)
	ctx := t.Context()
	charge := func(amount int64, source string) *stripe.ChargeCreateParams {
		params := &stripe.ChargeCreateParams{Amount: stripe.Int64(amount), Currency: stripe.String("usd"), Source: &stripe.PaymentSourceSourceParams{Token: stripe.String(source)},
			Metadata: map[string]string{"merchant_reference": "shop-1-a"}}
		params.SetIdempotencyKey("order-1-attempt-a")
		return params
	}
	ch, err := c.V1Charges.Create(ctx, charge(1000, "tok_visa"))
	require.NoError(t, err)
	assert.Equal(t, "ch_000001", ch.ID)
	assert.Equal(t, stripe.ChargeStatusSucceeded, ch.Status)
	again, err := c.V1Charges.Create(ctx, charge(1000, "tok_visa"))
	require.NoError(t, err)
	assert.Equal(t, ch.ID, again.ID)
	assert.Equal(t, "true", again.LastResponse.Header.Get(models.ReplayedHeader))

	_, err = c.V1Charges.Create(ctx, charge(1001, "tok_visa"))
	var se *stripe.Error
	require.True(t, errors.As(err, &se), "%v", err)
	assert.Equal(t, stripe.ErrorTypeIdempotency, se.Type)
	assert.Equal(t, http.StatusBadRequest, se.HTTPStatusCode)

	declined := charge(1000, "tok_chargeDeclined")
	declined.SetIdempotencyKey("order-2-attempt-a")
	_, err = c.V1Charges.Create(ctx, declined)
	require.True(t, errors.As(err, &se), "%v", err)
	assert.Equal(t, stripe.ErrorTypeCard, se.Type)
	assert.Equal(t, stripe.ErrorCodeCardDeclined, se.Code)

	var found []string
	for ch, err := range c.V1Charges.Search(ctx, &stripe.ChargeSearchParams{SearchParams: stripe.SearchParams{Query: "metadata['merchant_reference']:'shop-1-a'"}}) {
		require.NoError(t, err)
		found = append(found, ch.ID)
	}
	assert.Equal(t, []string{"ch_000001"}, found)

	pi, err := c.V1PaymentIntents.Create(ctx, &stripe.PaymentIntentCreateParams{Amount: stripe.Int64(500), Currency: stripe.String("usd"),
		PaymentMethod: stripe.String("pm_card_visa"), Confirm: stripe.Bool(true), Metadata: map[string]string{"merchant_reference": "shop-3-a"}})
	require.NoError(t, err)
	assert.Equal(t, stripe.PaymentIntentStatusSucceeded, pi.Status)
	require.NotNil(t, pi.LatestCharge)
	assert.Equal(t, "ch_000002", pi.LatestCharge.ID)

	re, err := c.V1Refunds.Create(ctx, &stripe.RefundCreateParams{Charge: stripe.String("ch_000001"), Amount: stripe.Int64(300),
		Metadata: map[string]string{"merchant_reference": "refund-1"}})
	require.NoError(t, err)
	assert.Equal(t, int64(300), re.Amount)
	assert.Len(t, p.Charges(), 2)
	assert.Len(t, p.Refunds(), 1)
}
