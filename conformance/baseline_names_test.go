package conformance_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/conformance/check"
)

// TestRequirementIDsAreNoInvariantNames: a baseline entry names a
// certification requirement or an invariant, never both, so acknowledging
// one never silences the other. Regression (outside tester): the
// requirement `key-scoped-per-endpoint` shared its id with the invariant,
// so a baseline meant for the requirement also made every later property
// violation of the invariant KNOWN, other bugs included.
func TestRequirementIDsAreNoInvariantNames(t *testing.T) {
	invariants := map[string]bool{}
	for _, inv := range append(check.Safety(), check.Liveness()...) {
		invariants[inv.Name] = true
	}
	for _, r := range certify.Requirements() {
		assert.False(t, invariants[r.ID], "requirement %s is also an invariant's name", r.ID)
	}
}
