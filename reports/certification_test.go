package reports_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
)

// certFixture is a hand-made certification run: one requirement of each
// verdict, the failing one with evidence, and two invariants.
func certFixture() reports.Certification {
	ev := fixture().History.Exchanges[1:]
	return reports.Certification{
		RunID: "r-0042", Provider: "https://user:hunter2@sandbox.example/v1", Dialect: "stripe", Profile: "profiles/stripe.yaml",
		Started: t0, Finished: t0.Add(12*time.Minute + 3*time.Second),
		Budgets: []reports.Budget{{Name: "requests", Used: "180", Limit: "500"}, {Name: "charges", Used: "12", Limit: "0"}},
		Requirements: []reports.RequirementResult{
			{ID: "replay-returns-first-response", Title: "A completed key answers with the first response.", Source: "draft §2.6", Against: "draft", Level: reports.LevelShould, Verdict: reports.Fail, Reason: "the retry got a new charge id", Evidence: ev, Seconds: 1.25},
			{ID: "mismatch-rejected", Title: "Another body under a used key is refused.", Source: "draft §2.5", Against: "draft", Level: reports.LevelShould, Verdict: reports.Pass},
			{ID: "retention-window", Title: "A key is remembered for the published window.", Source: "profile: retention_window", Against: "profile", Level: reports.LevelProfile, Verdict: reports.Inconclusive, Reason: "the request budget ran out"},
		},
		Invariants: []reports.InvariantResult{
			{Name: "at-most-one-charge-per-order", Verdict: reports.Pass, Evaluations: 310, Subjects: 40, Subject: "orders"},
			{Name: "replay-consistent", Verdict: reports.Fail, Evaluations: 120, Subjects: 9, Subject: "replays", Reason: "replay-consistent: order 1 intent 1: a retry was answered 201 ch_2"},
		},
		Coverage: reports.Coverage{Sequences: 25, Steps: 310, Exchanges: 180, Faults: map[string]int{"lose-response": 4, "503": 2, "pass": 0},
			Shrink: reports.ShrinkSpend{Attempts: 1, Requests: 7, Charges: 5}},
	}
}

func TestCertificationMarkdown(t *testing.T) {
	md := string(reports.CertificationMarkdown(certFixture()))
	for _, want := range []string{
		"# idemcheck certification: FAIL\n",
		"| provider | `https://sandbox.example/v1` |\n", "| dialect | `stripe` |\n", "| profile | `profiles/stripe.yaml` |\n",
		"| run id | `r-0042` |\n", "| started | 2025-03-14T07:00:00Z |\n", "| duration | 12m3s |\n",
		"| requests | 180 | 500 |\n", "| charges | 12 | unbounded |\n",
		"| **FAIL** | `replay-returns-first-response` | SHOULD | draft | 2 |\n",
		"| PASS | `mismatch-rejected` | SHOULD | draft | 0 |\n",
		"| INCONCLUSIVE | `retention-window` | profile | profile | 0 |\n",
		"- `replay-returns-first-response`: A completed key answers with the first response. Source: draft §2.6. FAIL: the retry got a new charge id. [2 exchanges](#evidence-replay-returns-first-response)\n",
		"- `retention-window`: A key is remembered for the published window. Source: profile: retention_window. INCONCLUSIVE: the request budget ran out.\n",
		"25 sequences, 310 steps, 180 wire exchanges; faults injected: 503×2, lose-response×4; shrinking: 1 attempt, 7 requests, 5 charges.\n",
		"| **FAIL** | `replay-consistent` | 120 | 9 replays |\n",
		"- FAIL `replay-consistent`: replay-consistent: order 1 intent 1: a retry was answered 201 ch_2\n",
		"### Evidence: replay-returns-first-response\n\n| # | key | provider | client saw | charge |",
	} {
		assert.Contains(t, md, want)
	}
	assert.NotContains(t, md, "hunter2", "credentials in a provider URL never reach a report")
	assert.Equal(t, md, string(reports.CertificationMarkdown(certFixture())), "deterministic")
}

func TestCertificationOverall(t *testing.T) {
	c := certFixture()
	assert.Equal(t, reports.Fail, c.Overall())
	c.Requirements[0].Verdict, c.Invariants[1].Verdict = reports.Pass, reports.Pass
	assert.Equal(t, reports.Inconclusive, c.Overall(), "one requirement could not be decided")
	c.Requirements[2].Verdict = reports.Pass
	assert.Equal(t, reports.Pass, c.Overall())
	assert.Equal(t, reports.Inconclusive, reports.Certification{}.Overall(), "nothing tested is not a pass")
}

func TestCertificationJSON(t *testing.T) {
	b, err := reports.CertificationJSON(certFixture())
	require.NoError(t, err)
	var back struct {
		Verdict reports.Verdict `json:"verdict"`
		reports.Certification
	}
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, reports.Fail, back.Verdict)
	want := certFixture()
	assert.Equal(t, want.RunID, back.RunID)
	assert.Equal(t, want.Requirements[2], back.Requirements[2])
	assert.Equal(t, want.Invariants, back.Invariants)
	assert.Equal(t, want.Coverage, back.Coverage)
	assert.Len(t, back.Requirements[0].Evidence, 2)
	assert.Equal(t, cardHash[:8], back.Requirements[0].Evidence[0].CardHash)
	assert.NotContains(t, string(b), cardHash)
	assert.True(t, strings.HasPrefix(string(b), "{\n  \"verdict\": \"FAIL\",\n  \"run_id\": \"r-0042\""), "%s", b[:80])

	empty, err := reports.CertificationJSON(reports.Certification{RunID: "x"})
	require.NoError(t, err)
	assert.NotContains(t, string(empty), "null")
}

// junitDoc is the JUnit XML read back through encoding/xml.
type junitDoc struct {
	XMLName xml.Name `xml:"testsuites"`
	Tests   int      `xml:"tests,attr"`
	Suites  []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Skipped  int    `xml:"skipped,attr"`
		Time     string `xml:"time,attr"`
		Cases    []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Time      string `xml:"time,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func TestCertificationJUnit(t *testing.T) {
	b, err := reports.CertificationJUnit(certFixture())
	require.NoError(t, err)
	require.NoError(t, reports.ValidateJUnit(b), "%s", b)
	var doc junitDoc
	require.NoError(t, xml.Unmarshal(b, &doc))
	require.Len(t, doc.Suites, 2)
	req, inv := doc.Suites[0], doc.Suites[1]
	assert.Equal(t, 5, doc.Tests)
	assert.Equal(t, "723.000", req.Time)
	assert.Equal(t, []int{3, 1, 1}, []int{req.Tests, req.Failures, req.Skipped})
	assert.Equal(t, "replay-returns-first-response", req.Cases[0].Name)
	assert.Equal(t, "1.250", req.Cases[0].Time, "a requirement's case carries its own time")
	assert.Equal(t, "idemcheck.requirements.draft", req.Cases[0].Classname)
	require.NotNil(t, req.Cases[0].Failure)
	assert.Equal(t, "the retry got a new charge id", req.Cases[0].Failure.Message)
	assert.Nil(t, req.Cases[1].Failure)
	assert.Nil(t, req.Cases[1].Skipped)
	require.NotNil(t, req.Cases[2].Skipped, "INCONCLUSIVE is skipped")
	assert.Equal(t, "the request budget ran out", req.Cases[2].Skipped.Message)
	assert.Equal(t, []int{2, 1, 0}, []int{inv.Tests, inv.Failures, inv.Skipped})
	assert.Equal(t, "idemcheck.invariants", inv.Cases[1].Classname)
	assert.NotContains(t, string(b), "hunter2")
}

func TestFailureJUnit(t *testing.T) {
	invs := []string{"key-format", "one-key-per-intent", "books-balance"}
	b, err := reports.FailureJUnit(fixture(), invs)
	require.NoError(t, err)
	require.NoError(t, reports.ValidateJUnit(b), "%s", b)
	var doc junitDoc
	require.NoError(t, xml.Unmarshal(b, &doc))
	require.Len(t, doc.Suites, 1)
	s := doc.Suites[0]
	assert.Equal(t, "TestConformance", s.Name)
	assert.Equal(t, []int{3, 1, 0}, []int{s.Tests, s.Failures, s.Skipped})
	for i, c := range s.Cases {
		assert.Equal(t, invs[i], c.Name)
		assert.Equal(t, c.Name == "one-key-per-intent", c.Failure != nil, c.Name)
	}
	f := s.Cases[1].Failure
	assert.Equal(t, "one-key-per-intent: order 1 intent 1 sent 2 distinct keys", f.Message)
	assert.Contains(t, f.Text, fixtureExplanation)
	assert.Contains(t, f.Text, "replay: "+fixtureReplay)
	assert.Contains(t, f.Text, "reproducibility: reproduced 10/10")

	b, err = reports.FailureJUnit(fixture(), []string{"key-format"})
	require.NoError(t, err)
	assert.Contains(t, string(b), `<testcase name="one-key-per-intent"`, "the violated invariant is never dropped")
}

func TestValidateJUnitRejects(t *testing.T) {
	good, err := reports.FailureJUnit(fixture(), []string{"one-key-per-intent"})
	require.NoError(t, err)
	for name, mutate := range map[string]func(string) string{
		"a wrong failure count": func(s string) string { return strings.Replace(s, `failures="1"`, `failures="0"`, 1) },
		"a testcase without classname": func(s string) string {
			return strings.Replace(s, `classname="idemcheck.invariants"`, "", 1)
		},
		"a negative time": func(s string) string { return strings.Replace(s, `time="0.000"`, `time="-1"`, 1) },
		"another root":    func(s string) string { return strings.ReplaceAll(s, "testsuites", "results") },
		"an unknown child": func(s string) string {
			return strings.Replace(s, "</testcase>", "<oops></oops></testcase>", 1)
		},
		"not XML": func(s string) string { return s[:len(s)/2] },
	} {
		bad := mutate(string(good))
		require.NotEqual(t, string(good), bad, name)
		assert.Error(t, reports.ValidateJUnit([]byte(bad)), name)
	}
}

func TestReproducibilityString(t *testing.T) {
	assert.Equal(t, "reproduced 10/10", reports.Reproducibility{Runs: 10, Reproduced: 10}.String())
	assert.Equal(t, "flaky (7/10)", reports.Reproducibility{Runs: 10, Reproduced: 7}.String())
	assert.Equal(t, "flaky (0/10)", reports.Reproducibility{Runs: 10}.String())
	f := fixture()
	f.Reproducibility = &reports.Reproducibility{Runs: 10, Reproduced: 4}
	assert.Contains(t, string(reports.Markdown(f)), "Reproducibility: **flaky (4/10)** — some replays of the same sequence passed")
}

func TestProgress(t *testing.T) {
	var buf bytes.Buffer
	p := reports.NewProgress(&buf, 2, 3)
	for i := 0; i < 7; i++ {
		require.NoError(t, p.Sequence())
	}
	require.NoError(t, p.Requirement(certFixture().Requirements[1]))
	require.NoError(t, p.Requirement(certFixture().Requirements[2]))
	require.NoError(t, p.Done())
	assert.Equal(t, "idemcheck: 3 sequences run\nidemcheck: 6 sequences run\n"+
		"idemcheck: [1/2] PASS mismatch-rejected\nidemcheck: [2/2] INCONCLUSIVE retention-window: the request budget ran out\n"+
		"idemcheck: done, 2 requirements, 7 sequences\n", buf.String())
}

func TestRunFoldersAndIndex(t *testing.T) {
	dir := t.TempDir()
	summary := filepath.Join(t.TempDir(), "step-summary.md")
	t.Setenv(reports.StepSummaryEnv, summary)

	older := fixture()
	older.Test = "TestConformance/replay-new-charge"
	fp, err := reports.WriteFailureRun(dir, t0, older, []string{"one-key-per-intent"})
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "20250314T070000.000Z-TestConformance_replay-new-charge"), fp.Dir)
	for _, p := range []string{fp.Markdown, fp.JSON, fp.Curl, fp.JUnit} {
		assert.FileExists(t, p)
	}
	st, err := os.Stat(fp.Curl)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), st.Mode().Perm(), "the curl script is executable")

	c := certFixture()
	c.Started = t0.Add(time.Hour)
	cp, err := reports.WriteCertificationRun(dir, c)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "20250314T080000.000Z-r-0042"), cp.Dir)
	pass, err := reports.WriteRunSummary(dir, t0.Add(-time.Hour), "TestConformance", "idemcheck: 100 sequences, 2819 steps\nmore", reports.Pass, "")
	require.NoError(t, err)
	assert.FileExists(t, filepath.Join(pass, "summary.md"))

	index, err := os.ReadFile(filepath.Join(dir, reports.IndexFile))
	require.NoError(t, err)
	rows := strings.Split(strings.TrimSpace(string(index)), "\n")
	require.GreaterOrEqual(t, len(rows), 3)
	rows = rows[len(rows)-3:]
	assert.Equal(t, "| 2025-03-14 08:00:00 | [r-0042](20250314T080000.000Z-r-0042/certification.md) | certification | **FAIL** | https://sandbox.example/v1 stripe |", rows[0])
	assert.Equal(t, "| 2025-03-14 07:00:00 | [TestConformance/replay-new-charge](20250314T070000.000Z-TestConformance_replay-new-charge/failure.md) | failure | **FAIL** | one-key-per-intent: order 1 intent 1 sent 2 distinct keys |", rows[1])
	assert.Equal(t, "| 2025-03-14 06:00:00 | [TestConformance](20250314T060000.000Z-TestConformance/summary.md) | property | PASS | idemcheck: 100 sequences, 2819 steps |", rows[2])

	sum, err := os.ReadFile(summary)
	require.NoError(t, err)
	s := string(sum)
	assert.Contains(t, s, "### idemcheck: one-key-per-intent violated\n\n"+fixtureExplanation)
	assert.Contains(t, s, "**reproduced 10/10**")
	assert.Contains(t, s, "# idemcheck certification: FAIL\n")
	assert.Contains(t, s, "# idemcheck: TestConformance passed\n")
	assert.Less(t, strings.Index(s, "one-key-per-intent violated"), strings.Index(s, "certification: FAIL"), "appended in order")
	assert.NotContains(t, s, "hunter2")

	t.Run("without GITHUB_STEP_SUMMARY nothing is appended", func(t *testing.T) {
		t.Setenv(reports.StepSummaryEnv, "")
		wrote, err := reports.AppendStepSummary([]byte("x"))
		require.NoError(t, err)
		assert.False(t, wrote)
	})
}

// A certification whose only deviations are in the baseline is KNOWN, not
// FAIL (a team gates CI on new deviations); a new one makes it FAIL. The
// page lists each deviation with its category and links from its run
// folder to the property's reports.
func TestCertificationDeviations(t *testing.T) {
	c := reports.Certification{
		RunID: "r1", Provider: "http://127.0.0.1:1", Dialect: "reference",
		Requirements: []reports.RequirementResult{{ID: "replay-returns-first-response", Verdict: reports.Pass}},
		Invariants:   []reports.InvariantResult{{Name: "replay-consistent", Verdict: reports.Known}},
		Deviations: []reports.Deviation{{Invariant: "replay-consistent", Category: "replay-consistent: …: x", Message: "replay-consistent: order 1: x",
			Verdict: reports.Known, Steps: 2, Minimal: "minimal", Report: "run-p/failure.md", Curl: "run-p/failure.curl.sh"}},
	}
	assert.Equal(t, reports.Known, c.Overall())
	md := string(reports.CertificationMarkdown(c))
	assert.Contains(t, md, "## Deviations")
	assert.Contains(t, md, "[failure.md](../run-p/failure.md)")
	assert.Contains(t, md, "`replay-consistent: …: x`")
	c.Deviations = append(c.Deviations, reports.Deviation{Invariant: "mismatch-rejected", Verdict: reports.Fail, Steps: 3})
	assert.Equal(t, reports.Fail, c.Overall())
}

// CompareExchanges marks the fields that differ, and the report shows
// them in bold side by side.
func TestCompareExchanges(t *testing.T) {
	a := models.Exchange{ID: 1, Method: "POST", HasKey: true, KeyHeader: `"k"`, Fingerprint: "aaaa", Forwarded: true, ProviderDone: true, ProviderStatus: 201, ProviderChargeID: "ch_1", Done: true, Status: 201}
	b := a
	b.ID, b.ProviderChargeID, b.Replayed = 2, "ch_2", true
	c := reports.CompareExchanges("first answer and replay", a, b)
	var differs []string
	for _, r := range c.Rows {
		if r.Differs {
			differs = append(differs, r.Field)
		}
	}
	assert.Equal(t, []string{"provider charge", "Idempotent-Replayed"}, differs)
	md := string(reports.Markdown(reports.Failure{Invariant: "replay-consistent", Compare: &c}))
	assert.Contains(t, md, "## What differs: first answer and replay\n\n| | exchange 1 | exchange 2 |\n")
	assert.Contains(t, md, "| provider charge | **`ch_1`** | **`ch_2`** |\n")
	assert.Contains(t, md, "| provider status | `201` | `201` |\n")
}

// A requirement failed on an illegal concurrent history keeps porcupine's
// visualisation in the run folder, linked from the page.
func TestCertificationKeepsPorcupinesVisualisation(t *testing.T) {
	dir := t.TempDir()
	c := reports.Certification{RunID: "r-viz", Started: time.Date(2025, 3, 14, 7, 0, 0, 0, time.UTC),
		Requirements: []reports.RequirementResult{{ID: "concurrent-same-key-charges-once", Verdict: reports.Fail, Linearizability: []byte("<html>porcupine</html>")}}}
	p, err := reports.WriteCertificationRun(dir, c)
	require.NoError(t, err)
	page, err := os.ReadFile(filepath.Join(p.Dir, "concurrent-same-key-charges-once.porcupine.html"))
	require.NoError(t, err)
	assert.Equal(t, "<html>porcupine</html>", string(page))
	md, err := os.ReadFile(p.Markdown)
	require.NoError(t, err)
	assert.Contains(t, string(md), "[porcupine's visualisation](concurrent-same-key-charges-once.porcupine.html)")
}

// TestOverall_NotOfferedNeverFails: a MAY the provider does not offer
// leaves a passing run PASS and a failing one FAIL.
func TestOverall_NotOfferedNeverFails(t *testing.T) {
	c := reports.Certification{Requirements: []reports.RequirementResult{
		{ID: "replay-returns-first-response", Verdict: reports.Pass},
		{ID: "replay-marked", Level: reports.LevelMay, Verdict: reports.NotOffered},
	}}
	assert.Equal(t, reports.Pass, c.Overall())
	c.Requirements[0].Verdict = reports.Fail
	assert.Equal(t, reports.Fail, c.Overall())
	c.Requirements = c.Requirements[1:]
	assert.Equal(t, reports.Inconclusive, c.Overall(), "only a MAY not offered: nothing was judged")
}
