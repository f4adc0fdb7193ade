package run

import (
	"strconv"
	"time"

	"github.com/idemcheck/idemcheck/reports"
)

// runStats is what r's run checked, for stats.json (reports.RunStats):
// the statistics so far, under verdict and reason. The test is the run's
// own (a parallel run's parent, not one of its properties), the checks
// -rapid.checks.
func (r *runState) runStats(verdict reports.Verdict, reason string) reports.RunStats {
	checks, _ := strconv.Atoi(rapidFlag("rapid.checks"))
	return reports.RunStats{
		Test: r.test, Verdict: verdict, Reason: reason, Shard: r.cfg.Shard.String(), Parallel: r.cfg.parallelism(),
		Seed: rapidSeed(), Checks: checks, Seconds: time.Since(r.started).Seconds(), Started: r.started.UTC(),
		Coverage: r.stats.Coverage(), Invariants: r.stats.Results(),
	}
}
