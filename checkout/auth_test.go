package checkout_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/checkout"
	"github.com/idemcheck/idemcheck/conformance"
	"github.com/idemcheck/idemcheck/reports"
)

// newAuthShop is the shop authenticating, as every SDK does, with the
// API key the harness hands it (Env.APIKey).
func newAuthShop(env checkout.Env) (checkout.Client, error) {
	if env.APIKey == "" {
		return nil, errors.New("no API key in checkout.Env")
	}
	c, err := newShop(env)
	c.(*shop).auth = "Bearer " + env.APIKey
	return c, err
}

// TestCheckClient_authenticated: an authenticated client is judged in its
// own account: the harness's probes of its keys carry the same
// credential, so the provider answers them from the client's keys.
// Regression (issue 27, item 3): the probes went without Authorization,
// the provider kept them under another account and charged them, and the
// run blamed its own provider on replay-consistent.
func TestCheckClient_authenticated(t *testing.T) {
	stats := conformance.CheckClient(t, newAuthShop)
	for _, r := range stats.Results() {
		assert.NotEqual(t, reports.Fail, r.Verdict, "%s: %s", r.Name, r.Reason)
		if r.Name == conformance.ReplayConsistent {
			assert.Equal(t, reports.Pass, r.Verdict, "the probes of the client's keys were judged: %s", r.Reason)
		}
	}
}

// TestCheckClient_authenticatedRefundProbe: the probe that sends a
// charge's key to /v1/refunds goes in the client's account too, so a
// provider whose refunds replay the charge's stored response
// (refund-replays-charge) is caught behind an authenticated client as
// behind an anonymous one. Regression (issue 27, item 3): the probe went
// without Authorization, found no charge in that account, and the mutant
// passed.
func TestCheckClient_authenticatedRefundProbe(t *testing.T) {
	if inChild(t.Name()) {
		conformance.CheckClient(t, newAuthShop)
		return
	}
	t.Parallel()
	out, failed := runChild(t, t.Name(), 2*time.Minute, "IDEMCHECK_MUTANT=refund-replays-charge")
	require.True(t, failed, "the mutant must be caught; output:\n%s", out)
	assert.Contains(t, out, "key-scoped-per-endpoint: a refund under the key of … was answered with that charge's stored response")
}
