package run

import (
	"os"
	"runtime/debug"
	"sync"
)

// runGCPercent is the garbage collector's target (GOGC) while a property
// runs, unless the GOGC environment variable says otherwise. The property
// allocates much and keeps little (a 10 000-sequence run peaks at about
// 30 MiB resident), so at Go's default of 100 the collector runs often:
// measured on a 2-core machine (docs/BENCHMARKS.md), 4 × 2 000 sequences
// took 68 s at 100 and 32 s at 400 with one property, 45 s and 12 s with
// two at once.
const runGCPercent = 400

var gcMu sync.Mutex
var gcRuns int // properties running with runGCPercent; the first sets it, the last restores it
var gcBefore int

// raiseGC sets the collector's target to runGCPercent for the length of a
// run, unless GOGC is set, and returns what restores it (properties that
// overlap share one setting).
func raiseGC() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	gcMu.Lock()
	defer gcMu.Unlock()
	if gcRuns == 0 {
		gcBefore = debug.SetGCPercent(runGCPercent)
	}
	gcRuns++
	var once sync.Once
	return func() {
		once.Do(func() {
			gcMu.Lock()
			defer gcMu.Unlock()
			if gcRuns--; gcRuns == 0 {
				debug.SetGCPercent(gcBefore)
			}
		})
	}
}
