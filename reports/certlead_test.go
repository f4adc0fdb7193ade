package reports_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
)

// writePage writes c's run folder under dir and returns its paths, its
// page and the path of replay-returns-first-response's curl script.
func writePage(t *testing.T, dir string, c reports.Certification) (reports.CertificationPaths, string, string) {
	t.Helper()
	p, err := reports.WriteCertificationRun(dir, c)
	require.NoError(t, err)
	md, err := os.ReadFile(p.Markdown)
	require.NoError(t, err)
	return p, string(md), filepath.Join(p.Dir, "replay-returns-first-response.curl.sh")
}

// The page leads with what to do: the verdict, the counts and the seed,
// then the first failure's reason and the command that reproduces it —
// all in its first five lines; the command runs a curl script in the run
// folder that sends the evidence's requests again with their full keys
// and bodies, and no secret.
func TestCertificationPageLeadsWithWhatToDo(t *testing.T) {
	dir := t.TempDir()
	c := certFixture()
	c.Seed, c.Rerun = 42, "idemcheck certify -seed 42 https://sandbox.example/v1"
	p, md, script := writePage(t, dir, c)
	lines := strings.Split(md, "\n")
	require.GreaterOrEqual(t, len(lines), 5)
	assert.Equal(t, []string{
		"# idemcheck certification: FAIL",
		"Requirements (3): 1 PASS, 1 FAIL, 1 INCONCLUSIVE, 0 NOT JUDGED; invariants (2): 1 PASS, 1 FAIL, 0 INCONCLUSIVE, 0 NOT JUDGED; seed `42`.",
		"",
		"1. **FAIL** `replay-returns-first-response`: the retry got a new charge id\\",
		"   reproduce: `bash " + script + "` · [evidence](#evidence-replay-returns-first-response)",
	}, lines[:5])
	assert.Contains(t, string(md), "2. **FAIL** `replay-consistent`: replay-consistent: order 1 intent 1: a retry was answered 201 ch_2\\\n"+
		"   reproduce: `idemcheck certify -seed 42 https://sandbox.example/v1`\n", "an invariant without a deviation is re-run")
	assert.Contains(t, string(md), "Run it all again, same seed: `idemcheck certify -seed 42 https://sandbox.example/v1`\n")

	sh, err := os.ReadFile(script)
	require.NoError(t, err)
	st, err := os.Stat(script)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), st.Mode().Perm())
	assert.Contains(t, string(sh), "send POST '/v1/charges' '"+models.FormatKey(fixtureKey)+"' '{\"amount\":54890,\"currency\":\"TRY\",\"source\":\"tok_visa\"",
		"the full key and the body as sent")
	assert.Contains(t, string(sh), `base="${IDEMCHECK_PROVIDER_URL:-https://sandbox.example/v1}"`)
	assert.NotContains(t, string(sh), "hunter2", "no credentials")
	assert.Contains(t, string(sh), "# idemcheck: replays the wire exchanges of a replay-returns-first-response failure")
	assert.NotContains(t, string(md), "hunter2")
	js, err := os.ReadFile(p.JSON)
	require.NoError(t, err)
	assert.Contains(t, string(js), `"reproduce": "bash `+script+`"`)
}

// CountVerdicts always counts PASS, FAIL, INCONCLUSIVE and NOT JUDGED, and
// KNOWN and NOT OFFERED only when there are some.
func TestCountVerdicts(t *testing.T) {
	assert.Equal(t, "(0): 0 PASS, 0 FAIL, 0 INCONCLUSIVE, 0 NOT JUDGED", reports.CountVerdicts(nil))
	assert.Equal(t, "(4): 1 PASS, 0 FAIL, 0 INCONCLUSIVE, 1 NOT JUDGED, 1 KNOWN, 1 NOT OFFERED",
		reports.CountVerdicts([]reports.Verdict{reports.Known, reports.Pass, reports.NotOffered, reports.NotJudged}))
	// An acknowledged limit is counted, not left out of the total's parts.
	assert.Equal(t, "(2): 1 PASS, 0 FAIL, 0 INCONCLUSIVE, 0 NOT JUDGED, 1 ACKNOWLEDGED",
		reports.CountVerdicts([]reports.Verdict{reports.Pass, reports.Acknowledged}))
}

// Without a failure, the lead lists the INCONCLUSIVE verdicts with their
// reasons: what to do next.
func TestCertificationLeadWithoutFailure(t *testing.T) {
	c := certFixture()
	c.Requirements, c.Invariants = c.Requirements[1:], c.Invariants[:1]
	lines := strings.Split(string(reports.CertificationMarkdown(c)), "\n")
	assert.Equal(t, []string{
		"# idemcheck certification: INCONCLUSIVE",
		"Requirements (2): 1 PASS, 0 FAIL, 1 INCONCLUSIVE, 0 NOT JUDGED; invariants (1): 1 PASS, 0 FAIL, 0 INCONCLUSIVE, 0 NOT JUDGED.",
		"",
		"1. INCONCLUSIVE `retention-window`: the request budget ran out",
	}, lines[:4])
}

// Every line of the page before its evidence exchanges — the tables
// above all — fits a 100-column terminal, even for long reasons, titles
// and sources; the reproduction commands are the only lines allowed past.
func TestCertificationPageFitsHundredColumns(t *testing.T) {
	c := certFixture()
	long := strings.TrimSpace(strings.Repeat("a reason in many words ", 20))
	c.Requirements[0].Reason, c.Requirements[0].Source = long, long
	c.Requirements[2].Title = long
	c.Invariants[1].Reason = long
	c.Invariants = append(c.Invariants, reports.InvariantResult{Name: "key-format", Verdict: reports.Inconclusive, Reason: long})
	c.Deviations = []reports.Deviation{{Invariant: "at-most-one-charge-per-order", Verdict: reports.Fail, Steps: 4,
		Minimal: "not minimal: budget (the requests budget is spent while shrinking)", Message: long,
		Report: "20261203T114141.239Z-idemcheck_property-url-63f0b958/failure-2.md", Curl: "20261203T114141.239Z-idemcheck_property-url-63f0b958/failure-2.curl.sh"}}
	md := string(reports.CertificationMarkdown(c))
	md, _, _ = strings.Cut(md, "## Evidence")
	for line := range strings.SplitSeq(md, "\n") {
		if strings.HasPrefix(line, "|") {
			assert.LessOrEqual(t, utf8.RuneCountInString(line), 100, "table row too wide: %s", line)
		}
	}
	assert.Contains(t, md, "; deviations (1): 1 FAIL.\n", "a deviation is FAIL or KNOWN, nothing else")
	assert.Contains(t, md, "| 1 | **FAIL** | `at-most-one-charge-per-order` | 4 | not minimal: budget |\n")
	assert.Contains(t, md, "   shrink: not minimal: budget (the requests budget is spent while shrinking)\n")
	assert.Contains(t, md, "- INCONCLUSIVE `key-format`: "+long+"\n", "a reason once, below the table")
}

// catalogue.md sits in its run folder: its links to the deviations'
// reports lead to files that exist. Regression: they were written
// relative to the report directory and led nowhere.
func TestCatalogueLinksResolve(t *testing.T) {
	dir := t.TempDir()
	started := time.Date(2026, 12, 3, 11, 41, 41, 0, time.UTC)
	f := fixture()
	f.Test = "idemcheck/property-url-1"
	fp, err := reports.WriteFailureRun(dir, started, f, nil)
	require.NoError(t, err)
	rel := func(p string) string { r, _ := filepath.Rel(dir, p); return filepath.ToSlash(r) }
	devs := []reports.Deviation{{Invariant: f.Invariant, Verdict: reports.Fail, Message: f.Message, Steps: 2, Minimal: "minimal",
		Report: rel(fp.Markdown), Curl: rel(fp.Curl)}}
	cat, err := reports.WriteCatalogueRun(dir, started, f.Test, "idemcheck: 1 sequence", devs)
	require.NoError(t, err)
	md, err := os.ReadFile(cat)
	require.NoError(t, err)
	for _, target := range []string{"failure.md", "failure.curl.sh"} {
		link := "](../" + filepath.Base(fp.Dir) + "/" + target + ")"
		require.Contains(t, string(md), link)
		assert.FileExists(t, filepath.Join(filepath.Dir(cat), "..", filepath.Base(fp.Dir), target))
	}
}

// A long shrink is never silent: the invariant being shrunk, its current
// length and the requests spent, in the count lines' style, when the
// length changed (at most once an interval) or ten intervals passed.
func TestProgressShrink(t *testing.T) {
	var b strings.Builder
	p := reports.NewProgress(&b, 0, 2)
	for _, steps := range []int{5, 5, 4, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3} {
		require.NoError(t, p.Shrink("replay-consistent", steps, "120 requests spent"))
	}
	assert.Equal(t, "idemcheck: shrinking replay-consistent: now 5 shopper steps, 2 shrink checks; 120 requests spent\n"+
		"idemcheck: shrinking replay-consistent: now 3 shopper steps, 4 shrink checks; 120 requests spent\n"+
		"idemcheck: shrinking replay-consistent: now 3 shopper steps, 24 shrink checks; 120 requests spent\n", b.String())
}

// Regression (make test, TestCertifyFailureKeepsStderrShort): a real-time
// shrink of 2,750 checks whose candidates went up and down between 2 and
// 4 shopper steps printed 35 lines, a line at every change and every 100
// checks, and pushed the stderr of a failing certification past its bound.
// Now a line comes at a new shortest length or a new invariant, and
// otherwise at intervals that double.
func TestProgressShrinkStaysShortOverALongShrink(t *testing.T) {
	var b strings.Builder
	p := reports.NewProgress(&b, 0, 10)
	for i := range 2750 {
		require.NoError(t, p.Shrink("replay-consistent", 2+i/7%3, "spent"))
	}
	require.NoError(t, p.Shrink("at-most-one-charge-per-order", 2, "spent"))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	assert.LessOrEqual(t, len(lines), 10, "%s", b.String())
	assert.Contains(t, lines[len(lines)-1], "shrinking at-most-one-charge-per-order: now 2 shopper steps", "a new invariant is said")
}

// With causes, the page opens with one entry per cause, worst first
// (issue 24, item 5): its severity, id, sentence and the first showing
// verdict's particulars on one line, the command that reproduces it on
// the next (the first showing requirement's curl script, once the run
// folder holds it), then what shows it and what it leaves NOT JUDGED;
// line 2 counts the causes by severity before the verdicts.
func TestCertificationPageLeadsWithCauses(t *testing.T) {
	dir := t.TempDir()
	c := certFixture()
	c.Seed = 42
	c.Causes = []reports.Cause{
		{ID: "replay-charges-again", Severity: reports.ChargesTwice, Sentence: "a completed key is charged again",
			Reason: "the retry got a new charge id", Requirements: []string{"replay-returns-first-response"},
			Invariants: []string{"replay-consistent"}, Explains: []string{"retention-window"}, Reproduce: "idemcheck replay x.fail"},
		{ID: "quoted-key-equals-bare-key", Severity: reports.FormatOnly, Sentence: "the quoted key is refused"},
	}
	p, md, script := writePage(t, dir, c)
	lines := strings.Split(md, "\n")
	require.GreaterOrEqual(t, len(lines), 9)
	assert.Equal(t, []string{
		"# idemcheck certification: FAIL",
		"Causes (2): 1 charges twice, 1 format only; requirements (3): 1 PASS, 1 FAIL, 1 INCONCLUSIVE, 0 NOT JUDGED; invariants (2): 1 PASS, 1 FAIL, 0 INCONCLUSIVE, 0 NOT JUDGED; seed `42`.",
		"",
		"1. **charges twice** `replay-charges-again`: a completed key is charged again (the retry got a new charge id)\\",
		"   reproduce: `bash " + script + "`\\",
		"   shown by `replay-returns-first-response`, invariant `replay-consistent`\\",
		"   leaves NOT JUDGED `retention-window`",
		"2. **format only** `quoted-key-equals-bare-key`: the quoted key is refused",
		"",
	}, lines[:9])
	js, err := os.ReadFile(p.JSON)
	require.NoError(t, err)
	assert.Contains(t, string(js), `"reproduce": "bash `+script+`"`, "certification.json's cause carries the script too")
	assert.Contains(t, string(js), `"severity": "format only"`)
}
