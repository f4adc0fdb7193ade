package conformance_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/sut/mutants"
)

var updateMutantsDoc = flag.Bool("update-mutants-doc", false, "rewrite docs/mutants.md from the kill matrix")

// matrixSeeds are the fixed rapid seeds of the kill matrix.
var matrixSeeds = []string{"1", "2", "3", "4", "5"}

// minimumShownBy names, for a mutant with a LocalMinimum that none of the
// matrix seeds shrinks to, the test that shows its documented minimum
// instead (a sequence of exactly MinSteps breaking its invariant, none
// shorter). The matrix then asks the minimum on no seed, and still never
// below it. key-per-order: 3 steps on the 5 seeds, and on 24 of 24 seeds
// (1-24) since checkout-while-reconciling and the key-shape draw came in.
var minimumShownBy = map[string]string{
	"key-per-order": "conformance/internal/run TestKeyPerOrder_MinimumIsADoubleClick",
}

// kill is what one mutant run under one seed showed.
type kill struct {
	failed    bool
	invariant string
	steps     int
	checks    int // checks rapid ran until the first failure, that one included
	out       string
}

var failedAfter = regexp.MustCompile(`\[rapid\] failed after (\d+) tests`)

// matrixEnv is the rapid budget of one kill-matrix run: sequences of 15
// steps on average (shorter sequences shrink faster) and up to 300 of them.
var matrixEnv = []string{"RAPID_STEPS=15", "RAPID_CHECKS=300", "GOGC=400"}

// storeShrinkTime bounds rapid's shrinking of a mutant on a real store (its
// default is 30 s): each sequence there costs store round trips, ~6 times
// an in-memory one, and the documented minimum is reached well within it.
const storeShrinkTime = "RAPID_SHRINKTIME=8s"

// reachEnv is the rapid budget of the reach column (issue 28): the
// defaults a user runs with, 100 checks of rapid's default 30 steps, and
// shrinking bounded (the column counts checks to detect, not the shrunk
// length; the invariant a failure is reported on stays the one it was
// found on, since rapid keeps only shrinks that fail alike).
var reachEnv = []string{"RAPID_CHECKS=100", "RAPID_SHRINKTIME=2s", "GOGC=400"}

// runMutant runs the main job against mutant name ("" for the reference)
// under seed in a child process and reads what it reported.
func runMutant(t *testing.T, name, seed string) kill {
	return runMutantWith(t, name, seed, matrixEnv)
}

// runMutantWith is runMutant under the rapid budget budget.
func runMutantWith(t *testing.T, name, seed string, budget []string) kill {
	t.Helper()
	env := append([]string{"IDEMCHECK_MUTANT=" + name}, budget...)
	if m, err := mutants.Lookup(name); err == nil && m.ClientStore != "" {
		env = append(env, storeShrinkTime)
	}
	out, failed, dir := runConformance(t, seed, env...)
	return readKill(t, name, out, failed, dir)
}

// readKill reads what a run of the main job against mutant name reported
// in dir (sub is the report folder's subtest, "" for the default).
func readKill(t *testing.T, sub, out string, failed bool, dir string) kill {
	t.Helper()
	k := kill{failed: failed, out: out}
	if !failed {
		return k
	}
	raw, err := os.ReadFile(reportFile(dir, sub, "failure.json"))
	require.NoError(t, err, "a failing run writes its JSON report; output:\n%s", out)
	var rep struct {
		Invariant string `json:"invariant"`
		StepCount int    `json:"step_count"`
	}
	require.NoError(t, json.Unmarshal(raw, &rep))
	_, err = os.Stat(reportFile(dir, sub, "failure.md"))
	require.NoError(t, err, "a failing run writes its Markdown report")
	k.invariant, k.steps = rep.Invariant, rep.StepCount
	if m := failedAfter.FindStringSubmatch(out); m != nil {
		n, _ := strconv.Atoi(m[1])
		k.checks = n + 1
	}
	return k
}

// TestMutantMatrix is the kill matrix: every mutant, under every seed,
// must fail the main job on its documented invariant with a report, never
// shrink below its documented minimum (else the documentation is wrong),
// and shrink exactly to it on at least 4 of 5 seeds; the reference passes
// the same seeds. It also keeps
// docs/mutants.md in step (regenerate with -update-mutants-doc).
func TestMutantMatrix(t *testing.T) {
	var mu sync.Mutex
	results := map[string][]kill{}
	reaches := map[string]string{}
	t.Run("run", func(t *testing.T) {
		for _, m := range mutants.All() {
			if m.RedisStore != nil {
				continue // in real time: TestMutantMatrix/run/redis-store
			}
			if m.Invariant == "" {
				continue // no sequence meets it: certify/probe_mutants_test.go fails its Requirement
			}
			t.Run(m.Name, func(t *testing.T) {
				t.Parallel()
				var ks []kill
				for _, seed := range matrixSeeds {
					ks = append(ks, runMutant(t, m.Name, seed))
				}
				// rapid's shrinker can stop in a local minimum (another shape of
				// the same bug); the bar is the documented minimum on 4 of 5.
				exact := len(matrixSeeds) - 1
				if m.LocalMinimum != "" || m.ClientStore != "" {
					// A longer shape the shrinker cannot leave; or a real
					// store (PostgreSQL): shrinking is bounded in time
					// (storeShrinkTime) and a shrink attempt may not fail
					// again when store round trips take another course
					// ("flaky test"), as for the redis- rows.
					exact = 1
				}
				if _, ok := minimumShownBy[m.Name]; ok {
					exact = 0 // no matrix seed reaches it; the named test shows it
				}
				byInvariant := len(matrixSeeds)
				if m.Consequence != "" {
					// Measured under load (six runs at once on 2 cores): seed 3
					// first meets the overwritten attempt's second charge,
					// the other seeds books-balance, as unloaded.
					byInvariant--
				}
				judgeKills(t, m, matrixSeeds, ks, byInvariant, exact)
				var r string
				if *updateMutantsDoc { // the reach column: measured when the doc is regenerated
					r = measureReach(t, m)
				}
				mu.Lock()
				results[m.Name] = ks
				reaches[m.Name] = r
				mu.Unlock()
			})
		}
		t.Run("redis-store", func(t *testing.T) {
			t.Parallel()
			for name, ks := range storeMatrix(t) {
				mu.Lock()
				results[name] = ks
				mu.Unlock()
			}
		})
		t.Run("reference", func(t *testing.T) {
			t.Parallel()
			for _, seed := range matrixSeeds {
				assert.False(t, runMutant(t, "", seed).failed, "seed %s: false alarm on the reference client and provider", seed)
			}
		})
	})
	if t.Failed() {
		return
	}
	path := filepath.Join("..", "docs", "mutants.md")
	if *updateMutantsDoc {
		require.NoError(t, os.WriteFile(path, []byte(mutantsDoc(measured(results, reaches))), 0o644))
	}
	committed, err := os.ReadFile(path)
	require.NoError(t, err)
	// The measured columns are those of the last regeneration; everything
	// else must match the registry as it is now.
	assert.Equal(t, mutantsDoc(committedMeasures(string(committed))), string(committed),
		"docs/mutants.md is stale: run `make mutants-doc`")
}

// judgeKills asserts what m's runs under seeds showed: each failed, on
// its documented invariant on at least byInvariant seeds (another
// invariant first on the rest, only where byInvariant allows it), never
// below its documented minimum, and exactly at it on at least exact
// seeds.
func judgeKills(t judge, m mutants.Mutant, seeds []string, ks []kill, byInvariant, exact int) {
	t.Helper()
	n, by := 0, 0
	var others []string
	for i, k := range ks {
		seed := seeds[i]
		if !assert.True(t, k.failed, "%s seed %s: the mutant survived", m.Name, seed) {
			continue
		}
		if k.invariant != m.Invariant {
			others = append(others, fmt.Sprintf("seed %s: %s", seed, k.invariant))
			if m.Consequence != "" {
				assert.Equal(t, m.Consequence, k.invariant, "%s seed %s: first violated invariant, neither %s nor its consequence", m.Name, seed, m.Invariant)
			} else if byInvariant == len(seeds) {
				assert.Equal(t, m.Invariant, k.invariant, "%s seed %s: first violated invariant", m.Name, seed)
			}
			continue
		}
		by++
		assert.GreaterOrEqual(t, k.steps, m.MinSteps, "%s seed %s: shorter than the documented minimum: update it", m.Name, seed)
		if k.steps == m.MinSteps {
			n++
		} else {
			t.Logf("%s seed %s: shrunk to %d steps, documented minimum %d (a local minimum of the shrinker); output:\n%s", m.Name, seed, k.steps, m.MinSteps, k.out)
		}
	}
	assert.GreaterOrEqual(t, n, exact, "%s: shrunk to the documented minimum (%d) on %d of %d seeds", m.Name, m.MinSteps, n, len(seeds))
	assert.GreaterOrEqual(t, by, byInvariant, "%s: first broke its documented invariant %s on %d of %d seeds (%s)", m.Name, m.Invariant, by, len(seeds), strings.Join(others, "; "))
}

// judge is what judgeKills needs of a *testing.T.
type judge interface {
	assert.TestingT
	Helper()
	Logf(format string, args ...any)
}

// measure is a mutant's measured cells: shortest shrunk sequence over the
// seeds, the median checks to detect, and its reach at default settings
// (measureReach).
type measure struct{ shortest, checks, reach string }

func measured(results map[string][]kill, reaches map[string]string) map[string]measure {
	out := map[string]measure{}
	for name, ks := range results {
		shortest, checks := 0, []int{}
		for _, k := range ks {
			if shortest == 0 || k.steps < shortest {
				shortest = k.steps
			}
			checks = append(checks, k.checks)
		}
		sort.Ints(checks)
		reach := reaches[name]
		if reach == "" {
			reach = noReach // the redis- rows (real time): their matrix run is at 100 checks
		}
		out[name] = measure{strconv.Itoa(shortest), strconv.Itoa(checks[len(checks)/2]), reach}
	}
	return out
}

var docRow = regexp.MustCompile("(?m)^\\| `([a-z0-9-]+)` \\|.*\\| (\\d+|\\?) \\| (\\d+|\\?) \\| ([0-9]+ of [0-9]+, at most [0-9]+|[0-9]+ of [0-9]+|\\?|" + noReach + ") \\| [^|]* \\|$")

// committedMeasures reads the measured cells back from a committed doc.
func committedMeasures(doc string) map[string]measure {
	out := map[string]measure{}
	for _, m := range docRow.FindAllStringSubmatch(doc, -1) {
		out[m[1]] = measure{m[2], m[3], m[4]}
	}
	return out
}

// mutantsDoc renders docs/mutants.md: the registry, plus the measured cells
// ("?" for a mutant never measured).
func mutantsDoc(ms map[string]measure) string {
	var b strings.Builder
	b.WriteString("# Mutants\n\n")
	b.WriteString("<!-- Generated by `make mutants-doc` (go test ./conformance -run TestMutantMatrix -update-mutants-doc). Do not edit. -->\n\n")
	b.WriteString("Planted bugs that prove the harness sees each fault class. Select one with\n")
	b.WriteString("`IDEMCHECK_MUTANT=<name> go test ./conformance -run '^TestConformance$'`.\n")
	fmt.Fprintf(&b, "The kill matrix (`TestMutantMatrix`) runs each under rapid seeds %s with %s,\n", strings.Join(matrixSeeds, ", "), strings.Join(matrixEnv[:2], " "))
	b.WriteString("and asserts that it fails on its invariant and shrinks exactly to its documented minimum\n")
	b.WriteString("on at least 4 of the 5 seeds, never below it. The `pg-` mutants, on the client's PostgreSQL store, shrink in\n")
	fmt.Fprintf(&b, "at most %s of real store round trips and must reach their minimum on at least one seed. The `redis-` mutants plant their bug in the\n", strings.TrimPrefix(storeShrinkTime, "RAPID_SHRINKTIME="))
	fmt.Fprintf(&b, "provider's Redis store and run in real time (%s) under seeds %s with\n", storeEnv[0], strings.Join(storeSeeds, ", "))
	fmt.Fprintf(&b, "%s, %d at once, and must fail on their invariant on every seed, never below the\n", strings.Join(storeEnv[1:4], " "), storeParallel)
	b.WriteString("documented minimum; they need not reach it (shrinking in real time is bounded, and a\n")
	b.WriteString("failure may hang on how long steps took). The reference on Redis passes the same seeds. *Steps* are shopper steps, the\n")
	b.WriteString("drawn fault schedule aside; *shortest found* is over the seeds; *checks to detect* is the\n")
	b.WriteString("median number of random sequences rapid ran until the first failure.\n")
	fmt.Fprintf(&b, "*Caught at default settings* is the reach a user gets: on how many of seeds %s the mutant failed on its\n", strings.Join(matrixSeeds, ", "))
	fmt.Fprintf(&b, "invariant with %s and rapid's default 30 steps, and the most checks it took (at most 100);\n", reachEnv[0])
	b.WriteString("`make mutants-doc` measures it (CI checks the committed column: at least 4 of 5 for every row);\n")
	b.WriteString("the `redis-` rows (" + noReach + ") are measured by their own run above, at 100 checks, on every seed.\n\n")
	b.WriteString("| mutant | side | what is broken | invariant | documented minimum | shortest found | checks to detect | caught at default settings | fault class |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, m := range mutants.All() {
		if m.Invariant == "" {
			continue // listed below, with its requirement
		}
		me, ok := ms[m.Name]
		if !ok {
			me = measure{"?", "?", "?"}
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | `%s` | %d | %s | %s | %s | %s |\n",
			m.Name, m.Side, m.Description, m.Invariant, m.MinSteps, me.shortest, me.checks, me.reach, m.Class)
	}
	first := true
	for _, m := range mutants.All() {
		if m.Invariant != "" {
			continue
		}
		if first {
			b.WriteString("\nMutants no shopper sequence meets (their bug needs a request the reference client never\n")
			b.WriteString("sends: an empty or malformed key, an unknown path, an unparsable or large body, a keyed lookup,\n")
			b.WriteString("a stray header): not rows of the matrix; the certification\n")
			b.WriteString("FAILs the requirement named against each (`certify/probe_mutants_test.go`,\n")
			b.WriteString("`TestCertify_EdgeMutantsFailTheirRequirement`).\n\n")
			b.WriteString("| mutant | side | what is broken | requirement | fault class |\n")
			b.WriteString("|---|---|---|---|---|\n")
			first = false
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | `%s` | %s |\n", m.Name, m.Side, m.Description, m.Requirement, m.Class)
	}
	first = true
	for _, m := range mutants.All() {
		if m.LocalMinimum == "" {
			continue
		}
		if first {
			b.WriteString("\nMutants whose bug has a longer shape the shrinker cannot leave for the minimal one: the\n")
			b.WriteString("matrix asks their documented minimum on at least one seed (never below it), not four of five.\n\n")
			first = false
		}
		fmt.Fprintf(&b, "- `%s`: %s.\n", m.Name, m.LocalMinimum)
	}
	return b.String()
}
