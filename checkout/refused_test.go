package checkout_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/conformance"
)

// TestCheckClient_refusedRun: a run refused before it starts (here a
// live-looking API key for a provider URL: nothing is sent) still returns
// statistics, whose Results say why nothing was judged (issue 27, item
// 4). Regression: CheckClient returned a nil *Stats, and Results on it
// panicked.
func TestCheckClient_refusedRun(t *testing.T) {
	if inChild(t.Name()) {
		stats := conformance.CheckClient(t, newShop)
		for _, r := range stats.Results() {
			t.Logf("result %s %s: %s", r.Name, r.Verdict, r.Reason)
		}
		return
	}
	t.Parallel()
	out, failed := runChild(t, t.Name(), 2*time.Minute, "IDEMCHECK_PROVIDER=http://127.0.0.1:9", "IDEMCHECK_API_KEY=sk_live_"+"0123456789abcdef")
	require.True(t, failed, "a refused run fails its test; output:\n%s", out)
	assert.NotContains(t, out, "panic:")
	assert.Contains(t, out, "result one-key-per-intent INCONCLUSIVE: not judged: the run was refused before it started: ", out)
	assert.NotContains(t, out, "sk_live_0123456789abcdef", "the key is never printed")
}
