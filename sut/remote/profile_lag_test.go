package remote_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/sut/remote"
)

// A profile's lookup_lag is read as a Go duration, up to MaxLookupLag;
// left out, the lookup lists a charge at once.
func TestLoadProfile_LookupLag(t *testing.T) {
	for js, want := range map[string]time.Duration{
		`{"name":"lagging","lookup_lag":"45s"}`: 45 * time.Second,
		`{"name":"lagging","lookup_lag":"10m"}`: remote.MaxLookupLag,
		`{"name":"lagging","lookup_lag":"0s"}`:  0,
		`{"name":"plain"}`:                      0,
	} {
		path := filepath.Join(t.TempDir(), "p.json")
		require.NoError(t, os.WriteFile(path, []byte(js), 0o644))
		p, err := remote.LoadProfile(path)
		require.NoError(t, err, js)
		assert.Equal(t, want, p.LookupLagDuration(), js)
	}
}
