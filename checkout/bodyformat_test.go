package checkout_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/checkout"
	"github.com/idemcheck/idemcheck/conformance"
	"github.com/idemcheck/idemcheck/reports"
)

// A client under test whose bodies are its own (another description than
// the reference client's "Bookstore order N") against the correct
// embedded provider raises no verdict: the probes resend the body the
// client recorded under the key, not one rebuilt in the reference
// client's format. Regression (issue 28): a probe's "same body" in the
// reference format was another body under the key, which the provider
// rightly refused with 422, and replay-consistent blamed the provider.
func TestCheckClient_OwnBodyFormatRaisesNoProviderVerdict(t *testing.T) {
	stats := conformance.CheckClient(t, func(env checkout.Env) (checkout.Client, error) {
		c, err := newShop(env)
		if err != nil {
			return nil, err
		}
		c.(*shop).describe = func(order int64) string { return fmt.Sprintf("Order #%d (books)", order) }
		return c, nil
	})
	require.NotNil(t, stats)
	assert.Empty(t, stats.Deviations())
	judged := 0
	for _, r := range stats.Results() {
		assert.NotEqual(t, reports.Fail, r.Verdict, "%s: %s", r.Name, r.Reason)
		if r.Name == conformance.ReplayConsistent && r.Verdict == reports.Pass {
			judged = r.Evaluations
		}
	}
	assert.Positive(t, judged, "replay-consistent judged the probes")
}
