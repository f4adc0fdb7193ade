package run

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
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
