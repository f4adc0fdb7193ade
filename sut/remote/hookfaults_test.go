package remote_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/sut/remote"
)

// TestHookFaultsAreBounded: the property's lifecycle faults are taken at
// most MaxRestartFaults restarts and MaxOutageFaults outages per run
// (the provider's second account shares the count); an outage needs both
// store hooks; a hook that fails is kept, its run named "property", and
// is not taken again.
func TestHookFaultsAreBounded(t *testing.T) {
	p, err := remote.New(remote.Config{BaseURL: "http://127.0.0.1:9", APIKey: hostileKey, SecondAPIKey: hostileKey + "2",
		Hooks: remote.Hooks{Restart: "true", StoreDown: "false", StoreUp: "true"}, Limits: remote.Limits{MaxDuration: time.Minute}})
	require.NoError(t, err)
	p2, ok := p.Account2()
	require.True(t, ok)
	for i := 0; i < remote.MaxRestartFaults; i++ {
		assert.True(t, []*remote.Provider{p, p2}[i%2].TakeHookFault("restart"), "restart %d", i+1)
	}
	assert.False(t, p.TakeHookFault("restart"), "past the bound")
	assert.False(t, p2.TakeHookFault("restart"), "past the bound, for the second account too")

	assert.True(t, p.TakeHookFault("store_down", "store_up"))
	require.NoError(t, p.RunHookFault(context.Background(), "store_up"))
	err = p.RunHookFault(context.Background(), "store_down")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not run again in this run")
	assert.False(t, p.TakeHookFault("store_down", "store_up"), "a failed hook is not taken again")
	runs := p.HookFaultRuns()
	require.Len(t, runs, 2)
	assert.Equal(t, []string{"store_up", "store_down"}, []string{runs[0].Name, runs[1].Name})
	for _, r := range runs {
		assert.Equal(t, remote.HookFaultFor, r.For)
	}

	q, err := remote.New(remote.Config{BaseURL: "http://127.0.0.1:9", APIKey: hostileKey, Hooks: remote.Hooks{StoreDown: "true"}})
	require.NoError(t, err)
	assert.False(t, q.TakeHookFault("store_down", "store_up"), "no store-up hook: no outage")
	assert.False(t, q.TakeHookFault("restart"), "no restart hook")
}
