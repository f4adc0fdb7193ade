package provider_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/provider"
)

// lookupIDs is the ids GET /v1/charges?merchant_reference=ref lists.
func lookupIDs(t *testing.T, p *provider.Provider, ref string) []string {
	t.Helper()
	w := get(p, "/v1/charges?merchant_reference="+ref)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	var list models.ChargeList
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &list))
	var ids []string
	for _, ch := range list.Data {
		ids = append(ids, ch.ID)
	}
	return ids
}

// With Config.LookupLag a charge is listed once it is LookupLag old on
// the provider's (virtual) clock, not a moment before; its create
// answered 201 at once and the ledger holds it all along.
func TestFind_LookupLagListsAChargeOnceItIsOldEnough(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const lag = 10 * time.Minute
		p := provider.New(provider.Config{LookupLag: lag})
		decodeCharge(t, post(t, p, "k1", visa))
		assert.Empty(t, lookupIDs(t, p, visa.MerchantReference), "listed at once")
		require.Len(t, p.Charges(), 1)

		time.Sleep(lag - time.Nanosecond)
		assert.Empty(t, lookupIDs(t, p, visa.MerchantReference), "listed before the lag passed")
		time.Sleep(time.Nanosecond)
		assert.Equal(t, []string{"ch_000001"}, lookupIDs(t, p, visa.MerchantReference))
	})
}

// Each charge lags from its own creation: an older one is listed while a
// newer one under the same reference is not yet.
func TestFind_LookupLagIsPerCharge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := provider.New(provider.Config{LookupLag: 5 * time.Minute})
		decodeCharge(t, post(t, p, "k1", visa))
		time.Sleep(3 * time.Minute)
		decodeCharge(t, post(t, p, "k2", visa))
		time.Sleep(2 * time.Minute)
		assert.Equal(t, []string{"ch_000001"}, lookupIDs(t, p, visa.MerchantReference))
		time.Sleep(3 * time.Minute)
		assert.Equal(t, []string{"ch_000001", "ch_000002"}, lookupIDs(t, p, visa.MerchantReference))
	})
}

// LookupLagOf gives one lookup its own lag, the larger of the two counting;
// without either (the default) a charge is listed at once.
func TestFind_LookupLagOfIsPerLookup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lagged := func(r *http.Request) time.Duration {
			if r.URL.Query().Get("lagged") != "" {
				return time.Hour
			}
			return 0
		}
		p := provider.New(provider.Config{LookupLag: time.Minute, LookupLagOf: lagged})
		decodeCharge(t, post(t, p, "k1", visa))
		time.Sleep(time.Minute)
		assert.Equal(t, []string{"ch_000001"}, lookupIDs(t, p, visa.MerchantReference))
		assert.Empty(t, lookupIDs(t, p, visa.MerchantReference+"&lagged=1"))

		plain := provider.New(provider.Config{})
		decodeCharge(t, post(t, plain, "k1", visa))
		assert.Equal(t, []string{"ch_000001"}, lookupIDs(t, plain, visa.MerchantReference))
	})
}
