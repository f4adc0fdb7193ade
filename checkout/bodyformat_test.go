package checkout_test

import (
	"fmt"
	"testing"
	"time"

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

// A client whose resends under one key carry a member outside the
// contract that changes per try (metadata.try) sends another request
// under that key: the fingerprint covers the whole payload
// (docs/provider-api.md), so the run fails the client on one-key-per-intent
// ("sent another body under a key it already used"). Before, the harness
// and the embedded provider fingerprinted the contract's five fields only,
// the provider replayed, and the run passed (breaker, issue 28's review).
func TestCheckClient_VolatileMetadataUnderOneKeyIsCaught(t *testing.T) {
	if inChild(t.Name()) {
		conformance.CheckClient(t, func(env checkout.Env) (checkout.Client, error) {
			c, err := newShop(env)
			if err != nil {
				return nil, err
			}
			c.(*shop).metadata = func(try int) any { return map[string]int{"try": try} }
			return c, nil
		})
		return
	}
	t.Parallel()
	out, failed := runChild(t, t.Name(), 3*time.Minute, "RAPID_CHECKS=100")
	require.True(t, failed, "a client resending another body under its key passed; output:\n%s", out)
	assert.Contains(t, out, "sent another body under a key it already used")
}

// The same member, constant across tries, is one request under the key:
// no client or provider verdict.
func TestCheckClient_StaticMetadataPasses(t *testing.T) {
	stats := conformance.CheckClient(t, func(env checkout.Env) (checkout.Client, error) {
		c, err := newShop(env)
		if err != nil {
			return nil, err
		}
		c.(*shop).metadata = func(int) any { return map[string]string{"channel": "web"} }
		return c, nil
	})
	require.NotNil(t, stats)
	assert.Empty(t, stats.Deviations())
}
