package run

import (
	"os"
	"runtime"
	"sync"

	"github.com/idemcheck/idemcheck/conformance/internal/machine"
)

// procsMu guards the properties in flight in process and the setting
// they share.
var (
	procsMu     sync.Mutex
	procsFlight int // in-process properties running now, over every run of the process
	procsBefore int // GOMAXPROCS before the first of them
)

// fewerProcs sets GOMAXPROCS to the number of in-process properties
// running at once (n for this run, plus those of runs that overlap it),
// at most what it was, for the length of a run, unless the GOMAXPROCS
// environment variable is set; it returns what restores it, to be called
// as the run's properties end. GOMAXPROCS is process-wide: other tests of
// the binary running meanwhile share the setting, and the last run to end
// puts back the value the first found (a change made in between is lost).
//
// A property in process is one chain of work in a testing/synctest
// bubble: every virtual sleep parks its goroutine and readies another,
// and with a processor idle the runtime wakes a thread to take it (a
// futex call each), which then finds nothing to do. With one processor
// per property there is none idle. Measured on a 2-core machine
// (docs/BENCHMARKS.md, issue 29): one property at GOMAXPROCS 2 spent
// ~11 % of its CPU in those wake-ups and ran 1.6–1.8× slower than at 1.
func fewerProcs(n int) (restore func()) {
	if os.Getenv("GOMAXPROCS") != "" || n < 1 {
		return func() {}
	}
	procsMu.Lock()
	defer procsMu.Unlock()
	if procsFlight == 0 {
		procsBefore = runtime.GOMAXPROCS(0)
	}
	procsFlight += n
	runtime.GOMAXPROCS(min(procsFlight, procsBefore))
	var once sync.Once
	return func() {
		once.Do(func() {
			procsMu.Lock()
			defer procsMu.Unlock()
			if procsFlight -= n; procsFlight == 0 {
				runtime.GOMAXPROCS(procsBefore)
			} else {
				runtime.GOMAXPROCS(min(procsFlight, procsBefore))
			}
		})
	}
}

// inProcess reports whether c's whole world runs in this process: the
// embedded provider on its memory store and the reference client (or a
// client mutant) on the memory attempt store, in virtual time. A client
// under test (CheckClient) is not: it may wait on real time.
func (c Config) inProcess() bool {
	return c.Provider == machine.ProviderEmbedded && !c.OnRedis() && c.PGStore == nil &&
		(c.ClientStore == "" || c.ClientStore == machine.StoreMemory) && c.Under == nil
}
