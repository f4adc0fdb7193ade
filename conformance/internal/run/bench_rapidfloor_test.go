package run

import (
	"fmt"
	"strconv"
	"testing"

	"pgregory.net/rapid"
)

// rapidFloorActions is how many actions BenchmarkRapidFloor's state
// machine has: as many as the main job's in virtual time with one client
// (machine.Actions: eleven, changed-second-click, reconcile-during-checkout).
const rapidFloorActions = 13

// BenchmarkRapidFloor is what rapid and synctest alone cost a sequence of
// the main job: rapid.Check of rapid.SyncTest of a Repeat at -rapid.steps
// (default 30) over rapidFloorActions actions that each draw three values
// (an index, an amount, a label) and do nothing else, with an empty check,
// under the property's GOMAXPROCS and GOGC (fewerProcs, raiseGC). No
// action skips: a real sequence also pays rapid a panic per skipped action
// (BenchmarkProperty's skips/sequence), and draws more per step. So this
// is a lower bound of the harness's own share of a sequence: make bench
// adds it to the systems under test alone (BenchmarkSystemsDirect) for the
// least a sequence can cost in direct handler calls.
func BenchmarkRapidFloor(b *testing.B) {
	withRapid(b, map[string]string{"rapid.checks": strconv.Itoa(b.N), "rapid.seed": seedOr("1")})
	b.ReportAllocs()
	var steps int
	actions := make(map[string]func(*rapid.T), rapidFloorActions+1)
	for i := range rapidFloorActions {
		actions[fmt.Sprintf("action-%02d", i)] = func(t *rapid.T) {
			steps++
			_ = rapid.IntRange(0, 3).Draw(t, "index")
			_ = rapid.IntRange(100, 99999).Draw(t, "total")
			_ = rapid.SampledFrom([]string{"EUR", "TRY", "USD"}).Draw(t, "currency")
		}
	}
	actions[""] = func(*rapid.T) {}
	b.ResetTimer()
	mustPass(b, b.Name(), func(t *testing.T) {
		t.Cleanup(raiseGC())
		t.Cleanup(fewerProcs(1))
		rapid.Check(t, func(t *rapid.T) {
			rapid.SyncTest(t, func(t *rapid.T) { t.Repeat(actions) })
		})
	})
	b.StopTimer()
	if steps == 0 {
		b.Fatal("no action ran")
	}
	b.ReportMetric(float64(steps)/float64(b.N), "steps/sequence")
}
