package machine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/backend"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// A remote provider with a second account is metered like one without:
// the share a known deviation's shrink may spend is counted on it too.
// Regression: SpendNow recognised only the plain remote backend, so with
// accounts: 2 and a second key KnownShrinkShare was never applied.
func TestSpendNowThroughASecondAccount(t *testing.T) {
	p, err := remote.New(remote.Config{BaseURL: "http://127.0.0.1:1", APIKey: "sk_test_a", SecondAPIKey: "sk_test_b",
		Profile: remote.Profile{Name: "two accounts", Accounts: 2}})
	require.NoError(t, err)
	_, ok := p.Account2()
	require.True(t, ok, "the provider has its second account")
	hist := models.NewHistory()
	plain := backend.NewRemote(p, hist, nil)
	both := backend.WithSecondAccount(backend.NewRemote(p, hist, nil), func(models.Snapshot, models.Exchange) bool { return false })
	_, isPlain := both.(*backend.Remote)
	require.False(t, isPlain, "WithSecondAccount wraps the backend")
	for name, b := range map[string]backend.Backend{"one account": plain, "two accounts": both} {
		_, ok := SpendNow(b)
		assert.True(t, ok, "%s: not metered", name)
	}
	_, ok = SpendNow(backend.NewEmbedded(0, 0, nil, hist, nil))
	assert.False(t, ok, "the embedded provider has no budget")
}
