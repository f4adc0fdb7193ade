package certify_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/mutants"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// Each provider mutant no shopper sequence meets (sut/mutants: Invariant
// "", Requirement set; issue 25, part A) fails the requirement it names,
// with a reason and the exchanges that show it, and the reference passes
// every requirement those mutants name.
func TestCertify_RequirementMutantsFailTheirRequirement(t *testing.T) {
	var named []string
	for _, m := range mutants.All() {
		if m.Invariant != "" {
			continue
		}
		named = append(named, m.Requirement)
		t.Run(m.Name, func(t *testing.T) {
			t.Parallel()
			cert := certifyURL(t, startRef(t, m.Name, 0, 0), remote.ReferenceProfile(), certify.Options{Only: []string{m.Requirement}})
			r := byID(cert)[m.Requirement]
			require.Equal(t, reports.Fail, r.Verdict, "%s: %s", m.Requirement, r.Reason)
			assert.NotEmpty(t, r.Reason)
			assert.NotEmpty(t, r.Evidence, "a FAIL carries its exchanges")
			t.Log(r.Reason)
		})
	}
	require.NotEmpty(t, named)
	t.Run("reference", func(t *testing.T) {
		t.Parallel()
		cert := certifyURL(t, startRef(t, "", 0, 0), remote.ReferenceProfile(), certify.Options{Only: named})
		for _, id := range named {
			r := byID(cert)[id]
			assert.Equal(t, reports.Pass, r.Verdict, "%s: %s", id, r.Reason)
		}
	})
}
