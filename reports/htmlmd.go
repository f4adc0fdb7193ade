package reports

import (
	"bytes"
	"html/template"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
)

// markdownHTML turns this package's Markdown into HTML with goldmark
// (github.com/yuin/goldmark): CommonMark plus GitHub's tables, the
// dialect the pages are written for (GitHub renders them too), with
// GitHub's heading ids so a page's "#evidence-…" links still land. The
// standard library has no Markdown parser, and a hand-rolled one would
// get tables and code spans wrong. Raw HTML in the Markdown is left out
// (goldmark's default): a page quotes what a provider sent, never markup
// to run.
var markdownHTML = goldmark.New(
	goldmark.WithExtensions(extension.GFM),
	goldmark.WithParserOptions(parser.WithAutoHeadingID()),
)

// foldedSections are the "## " sections of a page or failure story that
// report.html folds (<details>, closed): the evidence behind a verdict,
// which a reader opens when the lead and the diagram are not enough.
// Every "### Evidence: <id>" of a certification page is folded too.
var foldedSections = map[string]bool{
	"Run": true, "Budgets": true, "Shopper steps": true, "Fault schedule": true,
	"Wire exchanges": true, "Final state": true, "Statistics": true,
}

// folded reports whether a heading's text names a section to fold.
func folded(title string) bool {
	return foldedSections[title] || strings.HasPrefix(title, "Evidence: ")
}

// mdSection is a run of Markdown lines under one "## " or "### " heading
// (level 0: the lines before the first).
type mdSection struct {
	level int
	title string
	lines []string
}

// splitSections cuts md at its "## " and "### " headings, outside fenced
// code blocks.
func splitSections(md string) []mdSection {
	secs := []mdSection{{}}
	fence := false
	for _, line := range strings.SplitAfter(md, "\n") {
		if strings.HasPrefix(line, "```") {
			fence = !fence
		}
		if h := strings.IndexByte(line, ' '); !fence && (h == 2 || h == 3) && strings.Count(line[:h], "#") == h {
			secs = append(secs, mdSection{level: h, title: strings.TrimSpace(line[h:])})
		}
		last := &secs[len(secs)-1]
		last.lines = append(last.lines, line)
	}
	return secs
}

// renderMarkdown renders md, folding the sections folded names: a folded
// section, its subsections with it, becomes <details> whose <summary> is
// its heading.
func renderMarkdown(md []byte) (template.HTML, error) {
	var out bytes.Buffer
	secs := splitSections(string(md))
	for i := 0; i < len(secs); i++ {
		s := secs[i]
		if s.level == 0 || !folded(s.title) {
			if err := markdownHTML.Convert([]byte(strings.Join(s.lines, "")), &out); err != nil {
				return "", err
			}
			continue
		}
		body := s.lines[1:]
		for i+1 < len(secs) && secs[i+1].level > s.level {
			i++
			body = append(body, secs[i].lines...)
		}
		out.WriteString(`<details class="evidence"><summary>`)
		if err := markdownHTML.Convert([]byte(s.lines[0]), &out); err != nil {
			return "", err
		}
		out.WriteString("</summary>\n")
		if err := markdownHTML.Convert([]byte(strings.Join(body, "")), &out); err != nil {
			return "", err
		}
		out.WriteString("</details>\n")
	}
	return template.HTML(out.String()), nil // goldmark escapes the text and drops raw HTML
}
