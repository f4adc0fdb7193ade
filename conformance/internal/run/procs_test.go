package run

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/conformance/internal/machine"
)

// A run in process lowers GOMAXPROCS to its properties at once, runs that
// overlap add theirs, it never goes above what it was, and the last run
// to end restores it; with GOMAXPROCS set in the environment nothing
// changes.
func TestFewerProcsOnePerPropertyAndRestored(t *testing.T) {
	t.Setenv("GOMAXPROCS", "")
	before := runtime.GOMAXPROCS(4)
	defer runtime.GOMAXPROCS(before)

	one := fewerProcs(1)
	assert.Equal(t, 1, runtime.GOMAXPROCS(0), "one property: one processor")
	two := fewerProcs(2)
	assert.Equal(t, 3, runtime.GOMAXPROCS(0), "an overlapping run of two: three")
	many := fewerProcs(8)
	assert.Equal(t, 4, runtime.GOMAXPROCS(0), "never above what it was")
	many()
	many() // a second call changes nothing
	assert.Equal(t, 3, runtime.GOMAXPROCS(0))
	one()
	assert.Equal(t, 2, runtime.GOMAXPROCS(0))
	two()
	assert.Equal(t, 4, runtime.GOMAXPROCS(0), "restored when the last run ends")

	t.Setenv("GOMAXPROCS", "4")
	keep := fewerProcs(1)
	assert.Equal(t, 4, runtime.GOMAXPROCS(0), "GOMAXPROCS set: left as it is")
	keep()
	assert.Equal(t, 4, runtime.GOMAXPROCS(0))
}

// The processors come back when the run's properties end, not when the
// test that ran it ends: a later run of the same test (on a real store,
// say) does not run at one processor, and runs one after another do not
// add up (breaker of c46761d: it was restored at the test's cleanup).
func TestFewerProcsEndsWithTheRun(t *testing.T) {
	t.Setenv("GOMAXPROCS", "")
	before := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(before)
	withRapid(t, map[string]string{"rapid.checks": "5", "rapid.seed": "1", "rapid.nofailfile": "true"})
	for range 2 {
		stats := Run(t, Config{Config: machine.Config{Provider: machine.ProviderEmbedded}, Parallel: 1, ReportDir: t.TempDir()})
		assert.Equal(t, 5, stats.Sequences())
		assert.Equal(t, 2, runtime.GOMAXPROCS(0), "restored as the run returned")
	}
}
