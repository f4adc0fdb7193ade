package reports

import (
	"html/template"
	"strings"
)

// htmlPage is report.html, written with html/template (the standard
// library's contextual escaping: every string from a run is escaped for
// where it lands). The
// Content-Security-Policy lets the page load nothing from anywhere: no
// network, no CDN; scripts and styles are inline. Mermaid turns each
// ```mermaid block (goldmark's <pre><code class="language-mermaid">) into
// an SVG; body[data-mermaid] says "done" or the error once it finished.
var htmlPage = template.Must(template.New(ReportFile).Funcs(template.FuncMap{
	"verdictClass": func(v Verdict) string { return strings.ToLower(strings.ReplaceAll(string(v), " ", "-")) },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; font-src data:; frame-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>idemcheck {{.Verdict}} · {{.RunID}}</title>
<style>
body { font: 15px/1.5 system-ui, sans-serif; margin: 0 auto; max-width: 72rem; padding: 1rem 1.5rem; color: #1f2328; }
header.run { display: flex; gap: 1rem; align-items: baseline; border-bottom: 1px solid #d0d7de; padding-bottom: .5rem; }
.verdict { font-weight: 700; padding: .1rem .6rem; border-radius: .3rem; color: #fff; background: #6e7781; }
.verdict.pass { background: #1a7f37; } .verdict.fail { background: #cf222e; } .verdict.known { background: #9a6700; }
.verdict.inconclusive { background: #bc4c00; }
section.part { border-bottom: 1px solid #d0d7de; padding-bottom: 1rem; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.3rem; } h3 { font-size: 1.1rem; }
table { border-collapse: collapse; display: block; overflow-x: auto; } th, td { border: 1px solid #d0d7de; padding: .2rem .5rem; vertical-align: top; }
code, pre { font: 13px/1.4 ui-monospace, monospace; } pre { background: #f6f8fa; padding: .6rem; overflow-x: auto; }
details.evidence { margin: .4rem 0; } details.evidence > summary { cursor: pointer; }
details.evidence > summary > h2, details.evidence > summary > h3 { display: inline; }
div.mermaid { overflow-x: auto; margin: 1rem 0; }
iframe.porcupine { width: 100%; height: 40rem; border: 1px solid #d0d7de; }
</style>
</head>
<body data-mermaid="pending">
<header class="run"><span class="verdict {{verdictClass .Verdict}}" id="verdict">{{.Verdict}}</span>
<strong>{{.RunID}}</strong><span>{{.Kind}}</span><span>{{.Summary}}</span></header>
{{with .Page}}<section class="part page" data-file="{{.Name}}">{{.Body}}</section>{{end}}
{{range .Stories}}<section class="part story" data-file="{{.Name}}"><p class="file">Failure story <a href="{{.Name}}">{{.Name}}</a></p>{{.Body}}</section>
{{end}}{{range .Visualisations}}<section class="part visualisation" data-file="{{.Name}}">
<details class="evidence visualisation"><summary><h2>porcupine's visualisation: {{.Name}}</h2></summary>
<p><a href="{{.Name}}">{{.Name}}</a> (the same page on its own)</p>
<iframe class="porcupine" sandbox="allow-scripts" loading="lazy" onload="this.dataset.loaded = 'yes'" title="{{.Name}}" src="{{.Doc}}"></iframe></details></section>
{{end}}<details class="licences"><summary>Licences</summary><p>Diagrams are drawn by Mermaid (@mermaid-js/tiny 12.0.0), inlined below; its bundled libraries' notices are in its source.</p><pre>{{.Licence}}</pre></details>
<script>
"use strict";
function openTarget() {
  const t = location.hash && document.getElementById(decodeURIComponent(location.hash.slice(1)));
  const d = t && t.closest("details");
  if (d) d.open = true;
}
window.addEventListener("hashchange", openTarget);
openTarget();
(async () => {
  const blocks = document.querySelectorAll("pre > code.language-mermaid");
  if (blocks.length === 0) { document.body.dataset.mermaid = "done"; return; }
  const gz = Uint8Array.from(atob("{{.Mermaid}}"), c => c.charCodeAt(0));
  const js = await new Response(new Blob([gz]).stream().pipeThrough(new DecompressionStream("gzip"))).text();
  const s = document.createElement("script");
  s.textContent = js;
  document.head.appendChild(s);
  const nodes = [];
  for (const code of blocks) {
    const div = document.createElement("div");
    div.className = "mermaid";
    div.textContent = code.textContent;
    code.parentElement.replaceWith(div);
    nodes.push(div);
  }
  mermaid.initialize({ startOnLoad: false, securityLevel: "strict" });
  await mermaid.run({ nodes });
  document.body.dataset.mermaid = "done";
})().catch(e => { document.body.dataset.mermaid = "error: " + e; });
</script>
</body>
</html>
`))
