package checkout_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/checkout"
	"github.com/idemcheck/idemcheck/conformance"
	"github.com/idemcheck/idemcheck/reports"
)

// TestCheckClient is how a checkout team certifies its own Go client: a
// constructor that takes the harness's provider URL, http.Client and clock
// (checkout.Env), and one call. It runs from the team's own package — this
// one is outside the harness — against the embedded provider on virtual
// time; a failure prints its report and replay line like the main job's.
func TestCheckClient(t *testing.T) {
	stats := conformance.CheckClient(t, newShop)
	for _, r := range stats.Results() {
		assert.NotEqual(t, reports.Fail, r.Verdict, "%s: %s", r.Name, r.Reason)
	}
}

// wireOnly hides every capability of a client but checkout.Client.
type wireOnly struct{ c checkout.Client }

func (w wireOnly) Checkout(ctx context.Context, o checkout.Order, token string) checkout.Result {
	return w.c.Checkout(ctx, o, token)
}

func (w wireOnly) Reconcile(ctx context.Context) (string, error) { return w.c.Reconcile(ctx) }

// TestCheckClient_withoutView: a client that reports no view of its own is
// judged on what the wire shows; the invariants that need its view are
// NOT JUDGED with the reason, never PASS.
func TestCheckClient_withoutView(t *testing.T) {
	stats := conformance.CheckClient(t, func(env checkout.Env) (checkout.Client, error) {
		c, err := newShop(env)
		return wireOnly{c}, err
	})
	verdicts := map[string]reports.InvariantResult{}
	for _, r := range stats.Results() {
		verdicts[r.Name] = r
	}
	for _, name := range []string{conformance.BooksBalance, conformance.ReconciliationConverges} {
		require.Equal(t, reports.NotJudged, verdicts[name].Verdict, name)
		assert.Contains(t, verdicts[name].Reason, "checkout.Viewer", name)
	}
	for _, name := range []string{conformance.OneKeyPerIntent, conformance.KeyFormat, conformance.AtMostOneChargePerOrder, conformance.ConflictNeverFinal} {
		assert.Equal(t, reports.Pass, verdicts[name].Verdict, "%s is judged from the wire: %s", name, verdicts[name].Reason)
	}
}
