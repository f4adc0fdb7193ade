package check

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/faults"
)

// The fault kinds this package reads from an exchange are package faults'
// own: a renamed kind would otherwise silently stop the store-down and
// provider-crash allowances of the provider invariants.
func TestFaultKindsAreTheFaultLayers(t *testing.T) {
	assert.Equal(t, string(faults.KindStoreDown), faultStoreDown)
	assert.Equal(t, string(faults.KindProviderCrash), faultProviderCrash)
}
