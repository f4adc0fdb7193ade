package reports

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// StatsFile and PropertyJUnitFile are the machine-readable files a property
// run keeps in its folder beside summary.md (or failure.md), read back by
// MergeRuns.
const (
	StatsFile         = "stats.json"
	PropertyJUnitFile = "property.junit.xml"
)

// RunStats is what one property run checked, as numbers: its coverage and
// each invariant's evaluations and verdict, with what it was (test, shard,
// parallel properties, seed, checks asked for) and how long it took.
type RunStats struct {
	Test    string  `json:"test"`
	Verdict Verdict `json:"verdict"`
	// Reason says why the verdict is not PASS (a budget, a violation).
	Reason string `json:"reason,omitempty"`
	// Shard is "i/n" (IDEMCHECK_SHARD), "" for an unsharded run.
	Shard string `json:"shard,omitempty"`
	// Parallel is how many rapid properties ran at once (IDEMCHECK_PARALLEL).
	Parallel int `json:"parallel,omitempty"`
	// Seed is -rapid.seed, 0 when every property drew a random one.
	Seed uint64 `json:"seed,omitempty"`
	// Checks is -rapid.checks: the sequences asked for.
	Checks int `json:"checks,omitempty"`
	// Seconds is the run's wall time, in seconds.
	Seconds    float64           `json:"seconds"`
	Started    time.Time         `json:"started"`
	Coverage   Coverage          `json:"coverage"`
	Invariants []InvariantResult `json:"invariants"`
}

// WriteRunStats writes s as stats.json and its JUnit rendering as
// property.junit.xml into the run folder dir (which exists: the one
// WriteRunSummary or WriteFailureRun returned).
func WriteRunStats(dir string, s RunStats) error {
	js, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("reports: encoding the run's statistics: %w", err)
	}
	junit, err := RunStatsJUnit(s)
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, StatsFile), append(js, '\n'), 0o644); err != nil {
		return fmt.Errorf("reports: %w", err)
	}
	if err := writeFile(filepath.Join(dir, PropertyJUnitFile), junit, 0o644); err != nil {
		return fmt.Errorf("reports: %w", err)
	}
	return nil
}

// ReadRunStats reads the stats.json of run folder dir.
func ReadRunStats(dir string) (RunStats, error) {
	var s RunStats
	return s, readJSON(filepath.Join(dir, StatsFile), &s)
}

// RunStatsJUnit renders s as JUnit XML: one testsuite named after the
// test with one testcase per invariant (class idemcheck.invariants): FAIL
// a <failure>, INCONCLUSIVE and NOT JUDGED a <skipped>, each with its
// reason and its evaluation count.
func RunStatsJUnit(s RunStats) ([]byte, error) {
	d := time.Duration(s.Seconds * float64(time.Second))
	name := s.Test
	if name == "" {
		name = "idemcheck"
	}
	return encodeJUnit("idemcheck", d, junitSuite(name, s.Started, d, invariantCases(s.Invariants)))
}

func invariantCases(invs []InvariantResult) []JUnitCase {
	var cases []JUnitCase
	for _, i := range invs {
		text := fmt.Sprintf("evaluated %d times over %d %s\n%s", i.Evaluations, i.Subjects, i.Subject, i.Reason)
		cases = append(cases, verdictCase(i.Name, "idemcheck.invariants", i.Verdict, i.Reason, strings.TrimSpace(text)))
	}
	return cases
}
