package conformance_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/internal/hostile"
	"github.com/idemcheck/idemcheck/sut/provider/server"
)

// The property against hostile providers (internal/hostile), each in a
// child process as a user runs it: short budgets, few checks.

// Regression (issue 11): against a provider that answers 503 to
// everything after the preflight, the harness's own find-by-reference
// failed, the run was "could not judge", and rapid ended it as "flaky
// test". It stops INCONCLUSIVE instead, naming the transient answer.
func TestRemotePropertyAgainstAPermanent503(t *testing.T) {
	t.Parallel() // it mostly waits (real time, a build): beside another such test
	s := hostile.Start(t, hostile.Options{Mode: hostile.Unavailable, After: 1})
	out, failed, _ := runConformance(t, "1", "IDEMCHECK_PROVIDER="+s.URL, "IDEMCHECK_MUTANT=", "RAPID_CHECKS=5", "IDEMCHECK_MAX_DURATION=40s")
	require.False(t, failed, out)
	assert.NotContains(t, out, "flaky")
	assert.NotContains(t, out, "could not judge")
	assert.Contains(t, out, "INCONCLUSIVE: the provider's charges could not be read")
	assert.Contains(t, out, "503 (transient")
}

// Regression (issue 11): a provider that merely rate limits its creates
// failed reconciliation-converges (an abandoned order paid again answered
// PaymentPending). Liveness needs a provider that answers once the
// faults heal; this one never did, so the run is INCONCLUSIVE.
func TestRemotePropertyAgainstARateLimitedProvider(t *testing.T) {
	s := hostile.Start(t, hostile.Options{Mode: hostile.RateLimit, RetryAfter: "-", PostsOnly: true})
	out, failed, _ := runConformance(t, "1", "IDEMCHECK_PROVIDER="+s.URL, "IDEMCHECK_MUTANT=", "RAPID_CHECKS=5", "IDEMCHECK_MAX_DURATION=60s")
	require.False(t, failed, out)
	assert.NotContains(t, out, "reconciliation-converges violated")
	assert.Contains(t, out, "INCONCLUSIVE: the provider did not settle once the faults healed (429×")
}

// Regression (issue 11): after "429 Retry-After: 3600" the property
// capped the wait at 30 s and then sent 190 requests in a second. The
// provider's Retry-After holds the whole run: one longer than the
// duration budget stops it INCONCLUSIVE with that reason, and nothing is
// sent after the 429. One sequence at a time, so that the create is the
// one request on its way when the 429 comes back; with several in flight
// each may have one on its way, and the hold of all of them is
// TestConcurrentSequencesHoldOnOneRetryAfter's.
func TestRemotePropertyHonoursRetryAfter(t *testing.T) {
	s := hostile.Start(t, hostile.Options{Mode: hostile.RateLimit, RetryAfter: "3600", After: 1})
	out, failed, _ := runConformance(t, "1", "IDEMCHECK_PROVIDER="+s.URL, "IDEMCHECK_MUTANT=", "RAPID_CHECKS=5", "IDEMCHECK_MAX_DURATION=30s", "IDEMCHECK_CONCURRENCY=1")
	require.False(t, failed, out)
	assert.Contains(t, out, "INCONCLUSIVE: the provider asked (Retry-After) to wait 1h0m0s, longer than the")
	reqs, _, _ := s.Counts()
	assert.Equal(t, 2, reqs, "the preflight and the create answered 429; nothing after it\n%s", out)
}

// Regression (issue 11): a provider echoing the API key (in its charge
// ids, a header, error bodies) put both keys into the test output and
// failure.md, .json, .junit.xml, .curl.sh and the job summary. Against
// such a provider serving replay-new-charge (so the property fails and
// writes its report), nothing written and nothing printed holds a key.
func TestRemotePropertyScrubsAnEchoedKey(t *testing.T) {
	t.Parallel() // it mostly waits (real time, a build): beside another such test
	const key, key2 = "sk_test_hostileECHO0123456789", "sk_test_hostileSECOND98765"
	h, err := server.Handler("replay-new-charge", 0, 20*time.Millisecond)
	require.NoError(t, err)
	s := hostile.Start(t, hostile.Options{Mode: hostile.EchoKey, Provider: h})
	summary := filepath.Join(t.TempDir(), "summary.md")
	out, failed, dir := runConformance(t, "1", "IDEMCHECK_PROVIDER="+s.URL, "IDEMCHECK_MUTANT=", "IDEMCHECK_API_KEY="+key, "IDEMCHECK_API_KEY_2="+key2,
		"GITHUB_STEP_SUMMARY="+summary, "RAPID_CHECKS=30", "RAPID_SHRINKTIME=2s", "IDEMCHECK_MAX_DURATION=60s", "IDEMCHECK_MAX_REQUESTS=3000", "IDEMCHECK_MAX_CHARGES=2000")
	require.True(t, failed, "replay-new-charge must fail the property:\n%s", out)
	files := []string{summary}
	require.NoError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, path)
		}
		return err
	}))
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		assert.NotContains(t, string(b), key, f)
		assert.NotContains(t, string(b), key2, f)
	}
	for _, want := range []string{"failure.md", "failure.json", "failure.junit.xml", "failure.curl.sh", "summary.md"} {
		assert.Contains(t, names, want)
	}
	assert.NotContains(t, out, key)
	assert.NotContains(t, out, key2)
	md, err := os.ReadFile(reportFile(dir, "url", "failure.md"))
	require.NoError(t, err)
	assert.True(t, strings.Contains(string(md), "ch_[redacted]_"), "the echoed key shows as redacted in the charge ids")
}

// Regression (issue 11): net/http resent requests on kept-alive
// connections behind the meter. The property against the keep-alive
// trap — double clicks included — never gets more to the provider than
// its budget, and the provider receives exactly one request per
// connection.
func TestRemotePropertyBudgetHoldsAgainstAKeepAliveTrap(t *testing.T) {
	s := hostile.Start(t, hostile.Options{Mode: hostile.KeepAliveTrap})
	out, failed, _ := runConformance(t, "1", "IDEMCHECK_PROVIDER="+s.URL, "IDEMCHECK_MUTANT=", "IDEMCHECK_MAX_REQUESTS=60", "IDEMCHECK_MAX_CHARGES=30")
	require.False(t, failed, out)
	assert.Contains(t, out, "INCONCLUSIVE: the ")
	reqs, posts, conns := s.Counts()
	t.Logf("the provider received %d requests, %d creates, on %d connections", reqs, posts, conns)
	assert.LessOrEqual(t, reqs, 60)
	assert.LessOrEqual(t, posts, 30)
	assert.Equal(t, reqs, conns)
}

// Regression (breaker, issue 11): after a preflight that passed, a
// provider whose answers were over the body cap, or a 101 to a plain
// request, made the harness's own find-by-reference fail with no
// transient status: the run was "could not judge", and rapid ended it
// as "flaky test, can not reproduce a failure". The provider's truth
// could not be read: the run stops INCONCLUSIVE naming the cause.
func TestRemotePropertyAgainstUnreadableLookups(t *testing.T) {
	for mode, cause := range map[hostile.Mode]string{hostile.Endless: "oversize", hostile.Switch: "malformed or cut answer"} {
		t.Run(string(mode), func(t *testing.T) {
			s := hostile.Start(t, hostile.Options{Mode: mode, After: 1})
			out, failed, _ := runConformance(t, "1", "IDEMCHECK_PROVIDER="+s.URL, "IDEMCHECK_MUTANT=", "RAPID_CHECKS=5", "IDEMCHECK_MAX_DURATION=40s")
			require.False(t, failed, out)
			assert.NotContains(t, out, "flaky")
			assert.NotContains(t, out, "could not judge")
			assert.Contains(t, out, "INCONCLUSIVE: the provider's charges could not be read (remote: "+cause)
		})
	}
}

// Regression (issue 22, item 7): against a provider that answers every
// create 201 with random bytes (lookups truly, in the dialect), the
// property FAILed reconciliation-converges ("order 1 was abandoned but
// paying it again answered PaymentPending"), a judgement drawn from
// bodies that are not charges. It stops INCONCLUSIVE, naming them; a
// provider mutant of the dialect still fails (TestMutantMatrix).
func TestRemotePropertyAgainstRandomBytes(t *testing.T) {
	t.Parallel() // it mostly waits (real time, a build): beside another such test
	s := hostile.Start(t, hostile.Options{Mode: hostile.Random, PostsOnly: true})
	out, failed, _ := runConformance(t, "1", "IDEMCHECK_PROVIDER="+s.URL, "IDEMCHECK_MUTANT=", "IDEMCHECK_TIME_SCALE=0.0667",
		"IDEMCHECK_MAX_REQUESTS=3000", "IDEMCHECK_MAX_CHARGES=2000", "RAPID_CHECKS=30", "RAPID_SHRINKTIME=5s", "IDEMCHECK_MAX_DEVIATIONS=1", "IDEMCHECK_MAX_DURATION=90s")
	require.False(t, failed, out)
	assert.NotContains(t, out, "violated")
	assert.Contains(t, out, `INCONCLUSIVE: the provider's answers are not charges of the "reference" dialect: every create it answered got a body the dialect does not speak (201 not a charge`)
}
