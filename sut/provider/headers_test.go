package provider_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/provider"
)

const key1 = `"8e03978e-40d5-43e8-bc93-6894a57f9324"`

// TestCreate_LocationOnCreatedAndItsReplay: a 201 names its charge in
// Location, and the replay repeats it (docs/provider-api.md); a decline has none.
func TestCreate_LocationOnCreatedAndItsReplay(t *testing.T) {
	p := provider.New(provider.Config{})
	first := post(t, p, key1, visa)
	ch := decodeCharge(t, first)
	assert.Equal(t, "/v1/charges/"+ch.ID, first.Header().Get("Location"))
	again := post(t, p, key1, visa)
	assert.Equal(t, "true", again.Header().Get(models.ReplayedHeader))
	assert.Equal(t, first.Header().Get("Location"), again.Header().Get("Location"))
	assert.Equal(t, "application/json", again.Header().Get("Content-Type"))

	declined := visa
	declined.Source, declined.MerchantReference = models.DeclinedCard, "bookstore-1002-a"
	d := post(t, p, `"0a7c1f5e-36a2-4a55-9b52-2d3c0c1f0d11"`, declined)
	require.Equal(t, 402, d.Code)
	assert.Empty(t, d.Header().Get("Location"))
}

// TestPlanted_ReplayDropsLocation: the mutant's replay has no Location.
func TestPlanted_ReplayDropsLocation(t *testing.T) {
	p := provider.New(provider.Config{Planted: provider.Planted{ReplayDropsLocation: true}})
	first := post(t, p, key1, visa)
	require.NotEmpty(t, first.Header().Get("Location"))
	assert.Empty(t, post(t, p, key1, visa).Header().Get("Location"))
}

// TestPlanted_DeclineNotStored: a decline run again reads exactly like a
// replay (only the decline count tells), and another card then charges.
func TestPlanted_DeclineNotStored(t *testing.T) {
	p := provider.New(provider.Config{Planted: provider.Planted{DeclineNotStored: true}})
	declined := visa
	declined.Source = models.DeclinedCard
	d1, d2 := post(t, p, key1, declined), post(t, p, key1, declined)
	require.Equal(t, 402, d1.Code)
	assert.Equal(t, d1.Body.String(), d2.Body.String(), "byte-identical")
	assert.Equal(t, 2, p.Declines(), "run twice")
	decodeCharge(t, post(t, p, key1, visa))

	ref := provider.New(provider.Config{})
	post(t, ref, key1, declined)
	post(t, ref, key1, declined)
	assert.Equal(t, 1, ref.Declines(), "the reference replays its decline")
	requireProblem(t, post(t, ref, key1, visa), 422)
}

// TestPlanted_DeclinedKeyRecharges: another card under a stored decline
// charges, and the key keeps its decline.
func TestPlanted_DeclinedKeyRecharges(t *testing.T) {
	p := provider.New(provider.Config{Planted: provider.Planted{DeclinedKeyRecharges: true}})
	declined := visa
	declined.Source = models.DeclinedCard
	d1 := post(t, p, key1, declined)
	decodeCharge(t, post(t, p, key1, visa))
	d2 := post(t, p, key1, declined)
	assert.Equal(t, d1.Body.String(), d2.Body.String(), "the decline is still replayed")
	assert.Equal(t, 1, p.Declines())
}

// TestPlanted_ErrorsNotProblemDetails: the mutant's 422 keeps its body but
// not its media type.
func TestPlanted_ErrorsNotProblemDetails(t *testing.T) {
	p := provider.New(provider.Config{Planted: provider.Planted{ErrorsNotProblemDetails: true}})
	decodeCharge(t, post(t, p, key1, visa))
	other := visa
	other.Amount++
	w := post(t, p, key1, other)
	require.Equal(t, 422, w.Code)
	assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
}
