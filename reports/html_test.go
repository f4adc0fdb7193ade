package reports_test

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/reports"
)

// htmlRuns writes, into dir, a failing property run of the fixture (two
// deviations and its catalogue) and a certification that links its stories and holds
// porcupine's visualisation of a requirement; it returns both folders.
func htmlRuns(t *testing.T, dir string) (property, certification string) {
	t.Helper()
	started := time.Date(2026, 12, 3, 11, 41, 41, 0, time.UTC)
	f := fixture()
	f.Test = "idemcheck/property-url-1"
	fp, err := reports.WriteFailureRun(dir, started, f, nil)
	require.NoError(t, err)
	f2 := fixture()
	f2.Test, f2.Invariant, f2.Message = f.Test, "replay-consistent", "replay-consistent: order 1 intent 1: a retry was answered 201 ch_2"
	fp2, err := reports.WriteDeviationRun(dir, started, 2, f2, nil)
	require.NoError(t, err)
	rel := func(p string) string { r, _ := filepath.Rel(dir, p); return filepath.ToSlash(r) }
	devs := []reports.Deviation{
		{Invariant: f.Invariant, Verdict: reports.Fail, Message: f.Message, Steps: 2, Minimal: "minimal", Report: rel(fp.Markdown), Curl: rel(fp.Curl)},
		{Invariant: f2.Invariant, Verdict: reports.Fail, Message: f2.Message, Steps: 2, Minimal: "minimal", Report: rel(fp2.Markdown), Curl: rel(fp2.Curl)},
	}
	_, err = reports.WriteCatalogueRun(dir, started, f.Test, "idemcheck: 25 sequences", devs)
	require.NoError(t, err)
	c := certFixture()
	c.Provider = "http://127.0.0.1:1"
	c.Requirements[0].Linearizability = porcupinePage(t)
	c.Deviations = devs
	cp, err := reports.WriteCertificationRun(dir, c)
	require.NoError(t, err)
	return fp.Dir, cp.Dir
}

// porcupinePage is porcupine's visualisation of an illegal history: a
// register written 1 by one client and read as 2 by another after it.
func porcupinePage(t *testing.T) []byte {
	t.Helper()
	model := porcupine.Model{
		Init: func() any { return 0 },
		Step: func(state, input, output any) (bool, any) {
			if in := input.(int); in != 0 {
				return true, in // a write
			}
			return output.(int) == state.(int), state // a read
		},
		DescribeOperation: func(input, output any) string {
			if in := input.(int); in != 0 {
				return fmt.Sprintf("write(%d)", in)
			}
			return fmt.Sprintf("read() → %d", output)
		},
	}
	ops := []porcupine.Operation{
		{ClientId: 0, Input: 1, Call: 0, Output: 0, Return: 10},
		{ClientId: 1, Input: 0, Call: 20, Output: 2, Return: 30},
	}
	res, info := porcupine.CheckOperationsVerbose(model, ops, 10*time.Second)
	require.Equal(t, porcupine.Illegal, res)
	var page bytes.Buffer
	require.NoError(t, porcupine.Visualize(model, info, &page))
	return page.Bytes()
}

func readReport(t *testing.T, folder string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(folder, reports.ReportFile))
	require.NoError(t, err)
	return string(b)
}

// Each run folder gets a report.html: the page, every failure story it
// links or the folder holds, porcupine's page in a sandboxed frame,
// evidence folded, and nothing loaded from anywhere.
func TestReportHTML(t *testing.T) {
	property, certification := htmlRuns(t, t.TempDir())

	prop := readReport(t, property)
	assert.Contains(t, prop, `<span class="verdict fail" id="verdict">FAIL</span>`)
	assert.Contains(t, prop, `data-file="catalogue.md"`, "the page written last leads")
	assert.Equal(t, 1, strings.Count(prop, `data-file="failure.md"`), "a story the page links and the folder holds is shown once")
	assert.Contains(t, prop, `data-file="failure-2.md"`)
	assert.Contains(t, prop, `<code class="language-mermaid">sequenceDiagram`)

	cert := readReport(t, certification)
	page := strings.Index(cert, `data-file="certification.md"`)
	s1 := strings.Index(cert, `data-file="../20261203T114141.000Z-idemcheck_property-url-1/failure.md"`)
	s2 := strings.Index(cert, `data-file="../20261203T114141.000Z-idemcheck_property-url-1/failure-2.md"`)
	vis := strings.Index(cert, `data-file="replay-returns-first-response.porcupine.html"`)
	require.True(t, page >= 0 && s1 > page && s2 > s1 && vis > s2, "page, stories, visualisation in order: %d %d %d %d", page, s1, s2, vis)
	assert.Contains(t, cert, `<h1 id="idemcheck-certification-fail">idemcheck certification: FAIL</h1>`)
	frame := regexp.MustCompile(`<details class="evidence visualisation"><summary><h2>porcupine's visualisation: replay-returns-first-response.porcupine.html</h2></summary>\n` +
		`.*\n<iframe class="porcupine" sandbox="allow-scripts" loading="lazy" [^>]*src="data:text/html;base64,([^"]+)"></iframe></details>`).FindStringSubmatch(cert)
	require.NotNil(t, frame, "porcupine's page, folded, in a sandboxed frame")
	doc, err := base64.StdEncoding.DecodeString(html.UnescapeString(frame[1]))
	require.NoError(t, err)
	assert.Equal(t, string(porcupinePage(t)), string(doc))
	assert.Contains(t, cert, `sandbox="allow-scripts"`)
	assert.Regexp(t, `<details class="evidence"><summary><h3 id="evidence-replay-returns-first-response">Evidence: replay-returns-first-response</h3>\n</summary>`, cert)
	assert.Regexp(t, `<details class="evidence"><summary><h2 id="wire-exchanges">Wire exchanges</h2>\n</summary>`, cert, "a story's exchanges are folded")
	assert.NotRegexp(t, `<details class="evidence"><summary><h2 id="sequence-diagram">`, cert, "the diagram is shown")
	assert.Contains(t, cert, `content="default-src 'none';`)
	assert.NotRegexp(t, regexp.MustCompile(`(src|href)="(https?:)?//`), cert, "nothing is loaded from a network")
}

// A run with no diagram to draw does not carry Mermaid's megabyte.
func TestReportHTMLWithoutDiagram(t *testing.T) {
	dir := t.TempDir()
	folder, err := reports.WriteRunSummary(dir, time.Date(2026, 12, 3, 11, 0, 0, 0, time.UTC), "TestConformance", "idemcheck: 25 sequences", reports.Pass, "")
	require.NoError(t, err)
	page := readReport(t, folder)
	assert.Contains(t, page, `<span class="verdict pass" id="verdict">PASS</span>`)
	assert.Contains(t, page, "idemcheck: 25 sequences")
	assert.Less(t, len(page), 20_000)
}

// The vendored Mermaid is the one package-lock.json pins: the copy npm ci
// installs in node_modules/ (make test runs npm ci first).
func TestVendoredMermaidMatchesNPM(t *testing.T) {
	npm, err := os.ReadFile("../node_modules/@mermaid-js/tiny/dist/mermaid.tiny.js")
	require.NoError(t, err, "run: npm ci --no-audit --no-fund (from the repository root)")
	gz, err := os.Open("assets/mermaid.tiny.js.gz")
	require.NoError(t, err)
	defer func() { _ = gz.Close() }()
	r, err := gzip.NewReader(gz)
	require.NoError(t, err)
	vendored, err := io.ReadAll(io.LimitReader(r, 16<<20))
	require.NoError(t, err)
	assert.True(t, bytes.Equal(npm, vendored), "reports/assets/mermaid.tiny.js.gz differs from node_modules/: run make mermaid")
	licence, err := os.ReadFile("../node_modules/@mermaid-js/tiny/LICENSE")
	require.NoError(t, err)
	vendoredLicence, err := os.ReadFile("assets/mermaid.LICENSE")
	require.NoError(t, err)
	assert.Equal(t, string(licence), string(vendoredLicence))
}
