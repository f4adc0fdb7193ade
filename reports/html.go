package reports

import (
	_ "embed" // the vendored Mermaid
	"encoding/base64"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// ReportFile is the name of a run's HTML report in its run folder.
const ReportFile = "report.html"

// mermaidGz is Mermaid's single-file browser build, @mermaid-js/tiny
// 12.0.0 from npm (pinned in package.json; dist/mermaid.tiny.js, gzip -9n),
// MIT licence in assets/mermaid.LICENSE. The tiny build is the full
// build less mindmaps, architecture diagrams, KaTeX and lazy loading
// (2.9 MB against 5.5 MB; sequence diagrams are in), since every
// report.html carries its own copy. `make mermaid` refreshes it; a test
// holds it to node_modules/'s copy.
//
//go:embed assets/mermaid.tiny.js.gz
var mermaidGz []byte

//go:embed assets/mermaid.LICENSE
var mermaidLicence string

// mermaidB64 is mermaidGz in base64: report.html unpacks it in the browser
// (DecompressionStream), about 1 MB a report instead of 2.9 MB.
var mermaidB64 = template.JSStr(base64.StdEncoding.EncodeToString(mermaidGz)) // base64 has no quote nor backslash

// htmlReport is what htmlPage renders.
type htmlReport struct {
	RunID, Kind, Summary string
	Verdict              Verdict
	Page                 htmlPart   // the run's page (certification.md, failure.md, catalogue.md, summary.md)
	Stories              []htmlPart // the failure stories the page links or the folder holds
	Visualisations       []htmlPart // porcupine's pages, shown in a sandboxed frame
	Mermaid              template.JSStr
	Licence              string
}

// htmlPart is one file of the report: its name and its content.
type htmlPart struct {
	Name string
	Body template.HTML // rendered Markdown
	Doc  template.URL  // a whole HTML page (porcupine's) as a data: URL
}

// storyLink finds a failure story a page links: "failure.md",
// "failure-2.md", or one in a sibling run folder ("../<folder>/failure.md",
// as a certification links its property run's).
var storyLink = regexp.MustCompile(`\]\(((?:\.\./[^/()\s]+/)?failure(?:-[0-9]+)?\.md)\)`)

// storyName is the name of a failure story in its own run folder.
var storyName = regexp.MustCompile(`^failure(?:-[0-9]+)?\.md$`)

// writeReportHTML rebuilds report.html in dir/folder from what the folder
// holds now, e its run: the page (e.Report), then every failure story the
// page links or the folder holds (failure.md, failure-N.md), then
// porcupine's visualisations (*.porcupine.html), each in a sandboxed
// frame. It is self-contained:
// Mermaid is inline, and its Content-Security-Policy lets it load nothing.
func writeReportHTML(dir, folder string, e RunEntry) error {
	run := filepath.Join(dir, folder)
	r := htmlReport{RunID: e.RunID, Kind: e.Kind, Summary: e.Summary, Verdict: e.Verdict, Licence: mermaidLicence}
	var page []byte
	if e.Report != "" {
		var err error
		if page, err = os.ReadFile(filepath.Join(run, e.Report)); err != nil {
			return fmt.Errorf("reports: %w", err)
		}
		if r.Page.Body, err = renderMarkdown(page); err != nil {
			return fmt.Errorf("reports: rendering %s: %w", e.Report, err)
		}
		r.Page.Name = e.Report
	}
	for _, name := range storyFiles(run, e.Report, page) {
		md, err := os.ReadFile(filepath.Join(run, name))
		if err != nil {
			continue // a link to a run folder since removed
		}
		body, err := renderMarkdown(md)
		if err != nil {
			return fmt.Errorf("reports: rendering %s: %w", name, err)
		}
		r.Stories = append(r.Stories, htmlPart{Name: filepath.ToSlash(name), Body: body})
	}
	vis, _ := filepath.Glob(filepath.Join(run, "*.porcupine.html"))
	sort.Strings(vis)
	for _, p := range vis {
		doc, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("reports: %w", err)
		}
		// A data: URL, not srcdoc: a srcdoc frame takes on this page's
		// Content-Security-Policy, under which porcupine measures its text
		// boxes wrong; the frame is sandboxed (scripts, no same origin).
		r.Visualisations = append(r.Visualisations, htmlPart{Name: filepath.Base(p),
			Doc: template.URL("data:text/html;base64," + base64.StdEncoding.EncodeToString(doc))})
	}
	for _, p := range append([]htmlPart{r.Page}, r.Stories...) {
		if strings.Contains(string(p.Body), `<code class="language-mermaid">`) {
			r.Mermaid = mermaidB64 // else the megabyte is left out: nothing to draw
		}
	}
	var b strings.Builder
	if err := htmlPage.Execute(&b, r); err != nil {
		return fmt.Errorf("reports: rendering %s: %w", ReportFile, err)
	}
	return writeFile(filepath.Join(run, ReportFile), []byte(b.String()), 0o644)
}

// storyFiles are the failure stories of the run folder run, relative to
// it: those page links, in its order, then the folder's own failure*.md
// it did not link; never the page itself (report).
func storyFiles(run, report string, page []byte) []string {
	var names []string
	seen := map[string]bool{report: true}
	add := func(name string) {
		if r, err := filepath.Rel(run, filepath.Join(run, name)); err == nil {
			name = r // "../<this folder>/failure.md" is "failure.md"
		}
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	for _, m := range storyLink.FindAllSubmatch(page, -1) {
		if name := filepath.FromSlash(string(m[1])); !strings.HasPrefix(name, ".."+string(filepath.Separator)+".."+string(filepath.Separator)) {
			add(name)
		}
	}
	own, _ := filepath.Glob(filepath.Join(run, "failure*.md"))
	sort.Slice(own, func(i, j int) bool { return len(own[i]) < len(own[j]) || len(own[i]) == len(own[j]) && own[i] < own[j] })
	for _, p := range own {
		if storyName.MatchString(filepath.Base(p)) {
			add(filepath.Base(p))
		}
	}
	return names
}
