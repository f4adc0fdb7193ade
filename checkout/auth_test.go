package checkout_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/checkout"
	"github.com/idemcheck/idemcheck/conformance"
	"github.com/idemcheck/idemcheck/reports"
)

// TestCheckClient_authenticated: a client that authenticates, as every
// SDK does, with the API key the harness hands it (Env.APIKey) is judged
// in its own account: the harness's probes of its keys carry the same
// credential, so the provider answers them from the client's keys.
// Regression (issue 27, item 3): the probes went without Authorization,
// the provider kept them under another account and charged them, and the
// run blamed its own provider on replay-consistent.
func TestCheckClient_authenticated(t *testing.T) {
	stats := conformance.CheckClient(t, func(env checkout.Env) (checkout.Client, error) {
		if env.APIKey == "" {
			return nil, errors.New("no API key in checkout.Env")
		}
		c, err := newShop(env)
		c.(*shop).auth = "Bearer " + env.APIKey
		return c, err
	})
	for _, r := range stats.Results() {
		assert.NotEqual(t, reports.Fail, r.Verdict, "%s: %s", r.Name, r.Reason)
		if r.Name == conformance.ReplayConsistent {
			assert.Equal(t, reports.Pass, r.Verdict, "the probes of the client's keys were judged: %s", r.Reason)
		}
	}
}
