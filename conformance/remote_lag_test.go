package conformance_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/sut/provider"
	"github.com/idemcheck/idemcheck/sut/provider/server"
)

// remoteLag is the lookup lag of the provider served in
// TestRemotePropertyWaitsOutTheProfilesLookupLag.
const remoteLag = 150 * time.Millisecond

// laggingProfile writes profiles/reference.json with lookup_lag set to lag
// ("" leaves it out) and returns its path.
func laggingProfile(t *testing.T, lag string) string {
	t.Helper()
	raw, err := os.ReadFile("../profiles/reference.json")
	require.NoError(t, err)
	var p map[string]any
	require.NoError(t, json.Unmarshal(raw, &p))
	if lag != "" {
		p["lookup_lag"] = lag
	}
	out, err := json.Marshal(p)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "lagging.json")
	require.NoError(t, os.WriteFile(path, out, 0o644))
	return path
}

// The property against a URL whose lookup lags (the reference provider
// with Config.LookupLag, on a loopback port) passes when the profile
// publishes the lag: each reconciliation after a create waits it out in
// real time. Without lookup_lag in the profile the same run reads a
// lagging empty lookup as final on the offset clock and the reference
// client abandons a charged attempt: books-balance, a false alarm the
// profile field is there to prevent.
func TestRemotePropertyWaitsOutTheProfilesLookupLag(t *testing.T) {
	t.Parallel() // it mostly waits (real time)
	s, err := server.Start(provider.New(provider.Config{LookupLag: remoteLag}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	run := func(profile string) (string, bool) {
		out, failed, _ := runConformance(t, "1", "IDEMCHECK_PROVIDER="+s.URL, "IDEMCHECK_PROFILE="+profile, "IDEMCHECK_MUTANT=",
			"IDEMCHECK_MAX_REQUESTS=20000", "IDEMCHECK_MAX_CHARGES=10000", "RAPID_CHECKS=30", "RAPID_SHRINKTIME=3s", "IDEMCHECK_MAX_DEVIATIONS=1")
		return out, failed
	}
	out, failed := run(laggingProfile(t, remoteLag.String()))
	require.False(t, failed, "the lag published, the reference must pass; output:\n%s", out)
	out, failed = run(laggingProfile(t, ""))
	require.True(t, failed, "the lag not published: the run must read a lagging lookup as final; output:\n%s", out)
	require.Contains(t, out, "books-balance")
}
