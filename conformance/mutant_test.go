package conformance_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/reports"
)

// runConformance runs TestConformance of this test binary in a child
// process with env added, in a scratch directory, and returns its output,
// whether it failed, and the report directory. A child process is how a
// user meets a failure (go test fails), and rapid.SyncTest needs the real
// *testing.T that only a top-level test has.
func runConformance(t *testing.T, seed string, env ...string) (out string, failed bool, reportDir string) {
	t.Helper()
	out, failed, reportDir, err := childConformance(t.TempDir(), seed, env...)
	if err != nil {
		t.Fatalf("running the conformance test: %v", err)
	}
	return out, failed, reportDir
}

// childConformance is runConformance in dir, safe to call from any
// goroutine: an error is a child that could not run at all.
func childConformance(dir, seed string, env ...string) (out string, failed bool, reportDir string, err error) {
	reportDir = filepath.Join(dir, "reports")
	cmd := exec.Command(os.Args[0], "-test.run=^TestConformance$", "-test.v", "-rapid.seed="+seed)
	cmd.Dir = dir
	// The embedded provider in memory unless env says otherwise: these runs
	// are about the harness, not about the provider a user selected for
	// this package. A child's deliberate failure must not reach the CI job
	// summary unless the test asks for it in env (the last value of a
	// variable wins).
	cmd.Env = append(os.Environ(), append([]string{"IDEMCHECK_PROVIDER=embedded", "IDEMCHECK_PROVIDER_STORE=memory", "IDEMCHECK_REPORT_DIR=" + reportDir, "GITHUB_STEP_SUMMARY=", "IDEMCHECK_REPRODUCE=0"}, env...)...)
	b, err := cmd.CombinedOutput()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			return string(b), false, reportDir, err
		}
		failed, err = true, nil
	}
	return string(b), failed, reportDir, nil
}

// reportFile is where a run of TestConformance's subtest sub ("" for none:
// a mutant's name, "url" or "wiremock" for a provider, or both as
// "<mutant>/wiremock"; "url" stands for "url-<hash>") writes its report file name: in the run's own
// folder, <dir>/<UTC start>-TestConformance[_<sub>]/. The directory must hold one such run; when it holds
// none or several, the path returned does not exist.
func reportFile(dir, sub, name string) string {
	run := "TestConformance"
	if sub != "" {
		run += "/" + sub
	}
	_, suffix, _ := strings.Cut(reports.RunFolder(time.Time{}, run), "-") // the folder without its timestamp
	if strings.HasSuffix(suffix, "_url") {
		suffix += "-*" // the URL's hash (conformance.ProviderTag)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "*-"+suffix, name))
	if len(matches) == 1 {
		return matches[0]
	}
	return filepath.Join(dir, "(no single run of "+suffix+")", name)
}

// TestFreshKeyPerRequestMutantIsCaught: the planted bug of the seed
// article's first trap — a middleware with a new key per HTTP request —
// must fail the main job on one-key-per-intent, with a Markdown report
// holding a sequence diagram, a JSON report, and a shrunk sequence of at
// most 3 shopper steps, and a replay: line bash parses.
func TestFreshKeyPerRequestMutantIsCaught(t *testing.T) {
	out, failed, reportDir := runConformance(t, "1", "IDEMCHECK_MUTANT=fresh-key-per-request")
	require.True(t, failed, "the property must fail against the mutant; output:\n%s", out)
	require.Contains(t, out, "one-key-per-intent: order 1 intent 1 sent ")

	md, err := os.ReadFile(reportFile(reportDir, "fresh-key-per-request", "failure.md"))
	require.NoError(t, err, out)
	require.Contains(t, string(md), "sequenceDiagram")
	require.Contains(t, string(md), "one-key-per-intent")
	require.Contains(t, string(md), "IDEMCHECK_MUTANT=fresh-key-per-request go test ./conformance -run '^TestConformance$/^fresh-key-per-request$'")

	raw, err := os.ReadFile(reportFile(reportDir, "fresh-key-per-request", "failure.json"))
	require.NoError(t, err)
	var rep struct {
		Invariant string `json:"invariant"`
		StepCount int    `json:"step_count"`
	}
	require.NoError(t, json.Unmarshal(raw, &rep))
	require.Equal(t, "one-key-per-intent", rep.Invariant)
	require.LessOrEqual(t, rep.StepCount, 3, "shrunk sequence too long:\n%s", md)
	require.GreaterOrEqual(t, rep.StepCount, 1)
	require.True(t, strings.Contains(out, "replay: "), "the failure names the replay command")
	// Regression: the line ended "(from the repository root)", a bash
	// syntax error when pasted; it is a shell command line.
	_, line, _ := strings.Cut(out[strings.LastIndex(out, "replay: "):], "replay: ")
	line, _, _ = strings.Cut(line, "\n")
	require.Contains(t, line, "# from the repository root")
	sh, err := exec.Command("bash", "-n", "-c", line).CombinedOutput()
	require.NoError(t, err, "bash -n -c %q: %s", line, sh)
}

// TestReferencePassesInChild: the same child-process run without a mutant
// passes, so the mutant test above is not failing for another reason.
func TestReferencePassesInChild(t *testing.T) {
	out, failed, _ := runConformance(t, "1", "RAPID_CHECKS=20", "IDEMCHECK_MUTANT=")
	require.False(t, failed, out)
	require.Contains(t, out, "one-key-per-intent")
}

// TestSameSeedSameReport: a drawn sequence replays the same way — two runs
// of one seed, with concurrent clicks in play, write the same report (the
// fail file's name aside).
func TestSameSeedSameReport(t *testing.T) {
	read := func() map[string]any {
		_, failed, dir := runConformance(t, "3", "IDEMCHECK_MUTANT=no-inflight-lock")
		require.True(t, failed)
		raw, err := os.ReadFile(reportFile(dir, "no-inflight-lock", "failure.json"))
		require.NoError(t, err)
		var rep map[string]any
		require.NoError(t, json.Unmarshal(raw, &rep))
		delete(rep, "replay")
		return rep
	}
	require.Equal(t, read(), read())
}
