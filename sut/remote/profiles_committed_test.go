package remote_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/sut/remote"
)

// Every profile the repository publishes loads, and the reference
// provider's profile on Redis publishes the limits of the same handler as
// its profile in memory (the key length, the body size and the slow
// trigger): without them a certification of `idemcheck serve -store
// redis` left three requirements NOT JUDGED.
func TestCommittedProfiles(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "..", "profiles", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	got := map[string]remote.Profile{}
	for _, p := range paths {
		pr, err := remote.LoadProfile(p)
		require.NoError(t, err, p)
		got[filepath.Base(p)] = pr
	}
	mem, redis := got["reference.json"], got["reference-redis.json"]
	assert.Equal(t, mem.MaxKeyLength, redis.MaxKeyLength)
	assert.Equal(t, mem.MaxBodyBytes, redis.MaxBodyBytes)
	require.NotNil(t, redis.SlowTrigger)
	assert.Equal(t, *mem.SlowTrigger, *redis.SlowTrigger)
}
