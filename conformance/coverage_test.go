package conformance_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/sut/mutants"
)

// TestEveryInvariantHasAMutant: the harness proves its power per invariant
// (docs/invariants.md): each one is the expected kill of at least one mutant, and
// every mutant names a real invariant, or, where no random sequence meets
// its class, the certification requirement that kills it instead.
func TestEveryInvariantHasAMutant(t *testing.T) {
	known := map[string]bool{}
	for _, inv := range append(check.Safety(), check.Liveness()...) {
		known[inv.Name] = true
	}
	killedBy := map[string][]string{}
	reqs := map[string]bool{}
	for _, r := range certify.Requirements() {
		reqs[r.ID] = true
	}
	for _, m := range mutants.All() {
		if m.Requirement != "" {
			assert.True(t, reqs[m.Requirement], "mutant %s names unknown requirement %q", m.Name, m.Requirement)
		}
		if m.Invariant == "" { // killed by the certification alone, not the property
			assert.NotEmpty(t, m.Requirement, "%s names neither an invariant nor a requirement", m.Name)
			assert.Zero(t, m.MinSteps, m.Name)
			assert.Equal(t, "provider", m.Side, m.Name)
			assert.NotEmpty(t, m.Description, m.Name)
			assert.NotEmpty(t, m.Class, m.Name)
			continue
		}
		require.True(t, known[m.Invariant], "mutant %s expects unknown invariant %q", m.Name, m.Invariant)
		killedBy[m.Invariant] = append(killedBy[m.Invariant], m.Name)
		assert.NotEmpty(t, m.Description, m.Name)
		assert.NotEmpty(t, m.Class, m.Name)
		assert.GreaterOrEqual(t, m.MinSteps, 1, m.Name)
		assert.Contains(t, []string{"client", "provider"}, m.Side, m.Name)
	}
	for name := range known {
		assert.NotEmpty(t, killedBy[name], "no mutant is expected to break %s", name)
	}
}

// TestMutantLookup: mutants are selectable by name, and an unknown name is
// an error that lists the known ones.
func TestMutantLookup(t *testing.T) {
	m, err := mutants.Lookup("fresh-key-per-request")
	require.NoError(t, err)
	assert.Equal(t, "one-key-per-intent", m.Invariant)
	_, err = mutants.Lookup("no-such-bug")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "fresh-key-per-request")
	assert.Len(t, mutants.Names(), len(mutants.All()))
}
