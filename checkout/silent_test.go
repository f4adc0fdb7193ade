package checkout_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/checkout"
	"github.com/idemcheck/idemcheck/conformance"
)

// silent is a checkout that never reaches the provider: every click
// fails at once, as one that sent past Env.HTTPClient would look to the
// harness.
type silent struct{}

func (silent) Checkout(context.Context, checkout.Order, string) checkout.Result {
	return checkout.Result{Outcome: checkout.Failed}
}

func (silent) Reconcile(context.Context) (string, error) { return "nothing to do", nil }

// TestCheckClient_nothingJudged: a run whose safety invariants had not a
// single subject (no key sent, no POST, no order charged) fails, naming
// each invariant and why, instead of a plain PASS (issue 27, item 4).
// Regression: the run passed with every wire invariant held vacuously and
// the view's NOT JUDGED.
func TestCheckClient_nothingJudged(t *testing.T) {
	if inChild(t.Name()) {
		conformance.CheckClient(t, func(checkout.Env) (checkout.Client, error) { return silent{}, nil })
		return
	}
	t.Parallel()
	out, failed := runChild(t, t.Name(), 2*time.Minute, "RAPID_CHECKS=20")
	require.True(t, failed, "a run that judged nothing is no PASS; output:\n%s", out)
	assert.Contains(t, out, "conformance: nothing was judged in 20 sequences: the client under test sent nothing a safety invariant speaks of")
	assert.Contains(t, out, "key-format INCONCLUSIVE (held vacuously: no keys sent in 20 sequences)")
	assert.Contains(t, out, "books-balance NOT JUDGED (needs the client's own view")
}
