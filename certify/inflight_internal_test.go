package certify

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/models"
)

// seqEx is a forwarded keyed POST forwarded at event a and answered
// status at event b of the history's order (b 0: never answered).
func seqEx(id, a, b, status int) models.Exchange {
	return models.Exchange{ID: id, Method: "POST", HasKey: true, Key: "k", Forwarded: true,
		ArrivalSeq: a, ProviderSeq: b, ProviderDone: b != 0, ProviderStatus: status}
}

// The proxy forwards two held requests at once; the one forwarded second
// may take the provider's lock first. Fresh-clone CI under load saw the
// 409 go to the request forwarded first, and keyInFlight (which asked
// for the other request to be forwarded before the 409'd one) counted
// none of them: inflight-conflict-retry-after then PASSed a server that
// drops every Retry-After.
func TestKeyInFlight_EitherOrderOfForwarding(t *testing.T) {
	first409 := []models.Exchange{seqEx(1, 1, 3, 409), seqEx(2, 2, 4, 201)}
	assert.True(t, keyInFlight(first409, first409[0]), "409 to the request forwarded first")
	second409 := []models.Exchange{seqEx(1, 1, 4, 201), seqEx(2, 2, 3, 409)}
	assert.True(t, keyInFlight(second409, second409[1]), "409 to the request forwarded second")
	unanswered := []models.Exchange{seqEx(1, 1, 0, 0), seqEx(2, 2, 3, 409)}
	assert.True(t, keyInFlight(unanswered, unanswered[1]), "the other never answered")
	after := []models.Exchange{seqEx(1, 1, 2, 201), seqEx(2, 3, 4, 409)}
	assert.False(t, keyInFlight(after, after[1]), "409 after the other was answered")
	later := []models.Exchange{seqEx(1, 1, 2, 409), seqEx(2, 3, 4, 201)}
	assert.False(t, keyInFlight(later, later[0]), "the other forwarded after the 409")
	other := []models.Exchange{seqEx(1, 1, 4, 201), seqEx(2, 2, 3, 409)}
	other[0].Key = "k2"
	assert.False(t, keyInFlight(other, other[1]), "another key")
}
