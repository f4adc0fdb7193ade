package conformance_test

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/conformance"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/provider/server"
)

// counted is a loopback provider that counts what reaches it: every
// request, and the creates (POST) among them.
type counted struct {
	URL             string
	requests, posts atomic.Int64
}

// serveCounted serves the provider mutants listed ("" for the reference)
// with 20 ms of processing behind a counter; wrap, when not nil, answers
// a request instead of the provider when it returns true.
func serveCounted(t *testing.T, list string, wrap func(w http.ResponseWriter, r *http.Request, n int64) bool) *counted {
	t.Helper()
	h, err := server.Handler(list, 0, 20*time.Millisecond)
	require.NoError(t, err)
	c := &counted{}
	s, err := server.Start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := c.requests.Add(1)
		if r.Method == http.MethodPost {
			c.posts.Add(1)
		}
		if wrap != nil && wrap(w, r, n) {
			return
		}
		h.ServeHTTP(w, r)
	}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	c.URL = s.URL
	return c
}

// budgetUsed is the used count of budget name on a certification page.
func budgetUsed(t *testing.T, cert reports.Certification, name string) int64 {
	t.Helper()
	for _, b := range cert.Budgets {
		if b.Name == name {
			n, err := strconv.ParseInt(b.Used, 10, 64)
			require.NoError(t, err, "%+v", b)
			return n
		}
	}
	t.Fatalf("no %s budget on the page: %+v", name, cert.Budgets)
	return 0
}

// TestConcurrentSequencesKeepTheBudgetsHard: with 4 sequences in flight
// (IDEMCHECK_CONCURRENCY=4) against a provider whose deviation is found
// and then shrunk until a budget ends it, the provider receives exactly
// what the page says was used — never more than the limit — for the
// requests budget and for the charges budget, each the one that binds.
func TestConcurrentSequencesKeepTheBudgetsHard(t *testing.T) {
	t.Parallel() // it mostly waits (real time, a build): beside another such test
	for name, env := range map[string][]string{
		"requests": {"IDEMCHECK_MAX_REQUESTS=400", "IDEMCHECK_MAX_CHARGES=10000"},
		"charges":  {"IDEMCHECK_MAX_REQUESTS=20000", "IDEMCHECK_MAX_CHARGES=150"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := serveCounted(t, "replay-new-charge", nil)
			out, _, cert := certifyChild(t, p.URL, append(env, "IDEMCHECK_CONCURRENCY=4", "RAPID_CHECKS=200", "RAPID_SHRINKTIME=10m", "IDEMCHECK_TIME_SCALE=0.0667")...)
			require.Contains(t, out, "4 sequences in flight at once (IDEMCHECK_CONCURRENCY=4)")
			limit := map[string]int64{"requests": 400, "charges": 150}[name]
			require.EqualValues(t, p.requests.Load(), budgetUsed(t, cert, "requests"), "every request the provider got is counted once; output:\n%s", out)
			require.EqualValues(t, p.posts.Load(), budgetUsed(t, cert, "charges"), "every create the provider got is counted once; output:\n%s", out)
			got := map[string]int64{"requests": p.requests.Load(), "charges": p.posts.Load()}[name]
			require.LessOrEqual(t, got, limit, "the %s budget is hard with sequences in flight at once; output:\n%s", name, out)
			require.Positive(t, cert.Coverage.Sequences, out)
		})
	}
}

// TestConcurrentSequencesKeepTheDurationBudget: with 4 sequences in
// flight and a 12 s duration budget, no request reaches the provider
// after the budget's deadline — bounded here by the first request's
// arrival plus 12 s (the meter starts before it), with 5 s for a request
// taken just before the deadline to cross loopback on a loaded machine.
func TestConcurrentSequencesKeepTheDurationBudget(t *testing.T) {
	t.Parallel() // it mostly waits (real time, a build): beside another such test
	var mu sync.Mutex
	var first, last time.Time
	p := serveCounted(t, "", func(_ http.ResponseWriter, _ *http.Request, _ int64) bool {
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		if first.IsZero() {
			first = now
		}
		last = now
		return false
	})
	out, failed, _ := runConformance(t, "1", "IDEMCHECK_PROVIDER="+p.URL, "IDEMCHECK_MUTANT=", "IDEMCHECK_CONCURRENCY=4",
		"IDEMCHECK_MAX_DURATION=12s", "RAPID_CHECKS=100000", "IDEMCHECK_TIME_SCALE=0.0667")
	require.False(t, failed, out)
	require.Contains(t, out, "INCONCLUSIVE: the duration budget is spent", out)
	mu.Lock()
	defer mu.Unlock()
	require.False(t, last.After(first.Add(12*time.Second+5*time.Second)), "a request reached the provider %s after the first, past the 12 s budget; output:\n%s", last.Sub(first), out)
}

// TestConcurrentSequencesHoldOnOneRetryAfter: a 429 with Retry-After: 8
// answered to one sequence's request holds every sequence in flight: no
// request reaches the provider from 2 s after that answer until 8 s
// after it (the 2 s leave room for requests already on their way).
func TestConcurrentSequencesHoldOnOneRetryAfter(t *testing.T) {
	t.Parallel() // it mostly waits (real time, a build): beside another such test
	const k = 60 // well into the property with every sequence in flight
	var mu sync.Mutex
	var answered time.Time
	var during []time.Duration
	p := serveCounted(t, "", func(w http.ResponseWriter, _ *http.Request, n int64) bool {
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		if !answered.IsZero() {
			if since := now.Sub(answered); since > 2*time.Second && since < 8*time.Second {
				during = append(during, since)
			}
		}
		if n != k {
			return false
		}
		w.Header().Set("Retry-After", "8")
		w.WriteHeader(http.StatusTooManyRequests)
		answered = time.Now()
		return true
	})
	out, _, _ := runConformance(t, "1", "IDEMCHECK_PROVIDER="+p.URL, "IDEMCHECK_MUTANT=", "IDEMCHECK_CONCURRENCY=4",
		"IDEMCHECK_MAX_DURATION=40s", "RAPID_CHECKS=100000", "IDEMCHECK_TIME_SCALE=0.0667")
	require.Contains(t, out, "4 sequences in flight at once")
	mu.Lock()
	defer mu.Unlock()
	require.False(t, answered.IsZero(), "the provider never got its %d-th request; output:\n%s", k, out)
	require.Empty(t, during, "requests reached the provider while its Retry-After held (seconds after the 429); output:\n%s", out)
	require.Greater(t, p.requests.Load(), int64(k+8), "the run went on after the wait; output:\n%s", out)
}

// replayRE is a deviation's go test replay line in a run's output.
var replayRE = regexp.MustCompile(`replay: IDEMCHECK_PROVIDER=\S+ go test \./conformance -run '(\S+)' -rapid\.failfile=(\S+\.fail)`)

// TestConcurrentSequencesKeepOneCatalogue: against a provider with two
// planted bugs, a run with 4 sequences in flight records each category
// once, numbers the deviations 1, 2, … across the sequences, and every
// deviation has its own fail file and replay line, which runs that file
// alone under the run's test (one sequence, whatever
// IDEMCHECK_CONCURRENCY says); in real time a replay may pass, so each
// gets 3 tries and at least one deviation must fail again.
func TestConcurrentSequencesKeepOneCatalogue(t *testing.T) {
	t.Parallel() // it mostly waits (real time, a build): beside another such test
	url := serveMutants(t, "replay-new-charge,no-fingerprint")
	out, failed, dir := runConformance(t, "1", append(catalogueEnv, "IDEMCHECK_PROVIDER="+url, "IDEMCHECK_CONCURRENCY=4", "RAPID_CHECKS=100")...)
	require.True(t, failed, out)
	require.Contains(t, out, "4 sequences in flight at once")
	seen := map[string]bool{}
	n := 0
	for ; n < 10; n++ {
		if _, err := os.Stat(reportFile(dir, "url", reports.DeviationName(n+1)+".json")); err != nil {
			break
		}
		rep := deviationReport(t, dir, n+1, out)
		require.False(t, seen[rep.Category], "deviation %d repeats category %s; output:\n%s", n+1, rep.Category, out)
		seen[rep.Category] = true
	}
	require.GreaterOrEqual(t, n, 2, "both planted bugs are recorded; output:\n%s", out)
	lines := replayRE.FindAllStringSubmatch(out, -1)
	require.Len(t, lines, n, "one replay line per deviation; output:\n%s", out)
	files := map[string]bool{}
	replayed := 0
	for _, l := range lines {
		pattern, ff := l[1], l[2]
		require.Equal(t, "^TestConformance$/^"+conformance.ProviderTag(url)+"$", pattern, "the replay names the run's test, not a sequence's")
		require.False(t, files[ff], "each deviation has its own fail file: %s", ff)
		files[ff] = true
		// In real time a replay may take another way (the reproducibility
		// check's "flaky (k/n)"): up to 3 tries each, and at least one
		// deviation must fail again.
		for try := 0; try < 3; try++ {
			cmd := exec.Command(os.Args[0], "-test.run="+pattern, "-test.v", "-rapid.failfile="+ff, "-rapid.checks=0", "-rapid.nofailfile")
			cmd.Dir = filepath.Dir(dir)
			cmd.Env = append(os.Environ(), append(catalogueEnv, "IDEMCHECK_PROVIDER="+url, "IDEMCHECK_CONCURRENCY=4", "IDEMCHECK_REPORT_DIR="+t.TempDir(),
				"GITHUB_STEP_SUMMARY=", "IDEMCHECK_REPRODUCE=0")...)
			b, err := cmd.CombinedOutput()
			require.NotContains(t, string(b), "sequences in flight at once", "a replay runs one sequence")
			require.Contains(t, string(b), "=== RUN   TestConformance/"+conformance.ProviderTag(url), "the replay runs the run's test")
			if err != nil {
				require.Regexp(t, `deviation 1, FAIL: \S+ violated`, string(b), "replay of %s", ff)
				replayed++
				break
			}
		}
	}
	require.Positive(t, replayed, "at least one deviation fails again from its fail file")
	require.False(t, strings.Contains(out, "flaky test"), "never rapid's flaky verdict; output:\n%s", out)
}
