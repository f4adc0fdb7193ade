package reports

import (
	"fmt"
	"strings"
)

// mdEscaper escapes the characters that would turn text into Markdown
// markup, and table cell separators.
var mdEscaper = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", `*`, `\*`, `[`, `\[`, `]`, `\]`, `<`, `\<`, `>`, `\>`, `|`, `\|`,
	"\r\n", " ", "\n", " ", "\r", " ",
)

// mdText escapes s for use as plain Markdown text on one line.
func mdText(s string) string { return mdEscaper.Replace(s) }

// code renders s as a one-line code span; inTable also escapes "|", which
// GitHub tables split cells on even inside code spans.
func code(s string, inTable bool) string {
	s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
	if inTable {
		s = strings.ReplaceAll(s, "|", `\|`)
	}
	ticks := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return ticks + s + ticks
}

// optCode is code(s, true), or "" for an empty s.
func optCode(s string) string {
	if s == "" {
		return ""
	}
	return code(s, true)
}

// writeFenced writes body in a fenced code block tagged info, with a fence
// longer than any backtick run inside.
func writeFenced(b *strings.Builder, info, body string) {
	fence := strings.Repeat("`", max(3, longestRun(body, '`')+1))
	fmt.Fprintf(b, "%s%s\n%s\n%s\n\n", fence, info, strings.TrimRight(body, "\n"), fence)
}

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

// mmEscaper replaces what Mermaid would read as syntax with its entity codes.
var mmEscaper = strings.NewReplacer(
	"#", "#35;", ";", "#59;", `"`, "#quot;", "<", "#lt;", ">", "#gt;",
	"\r\n", " ", "\n", " ", "\r", " ", "%%", "#37;#37;",
)

// mm escapes s for the text of a Mermaid message or note.
func mm(s string) string { return mmEscaper.Replace(s) }
