package reports

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/idemcheck/idemcheck/models"
)

// Counts is the run's causes by severity, when it has some, and its
// verdicts counted, on one line, as the page's second line and the
// command's last line give them: "causes (1): 1 charges twice;
// requirements (33):
// 5 PASS, 9 FAIL, 0 INCONCLUSIVE, 1 NOT JUDGED, 2 NOT OFFERED; invariants
// (14): …; deviations (2): 2 FAIL". PASS, FAIL, INCONCLUSIVE and NOT
// JUDGED are always counted, KNOWN and NOT OFFERED when there are any;
// the deviations (FAIL, and KNOWN when some are) only when the property
// found some.
func (c Certification) Counts() string {
	reqs, _, _ := c.verdicts()
	var parts []string
	if len(c.Causes) > 0 {
		parts = append(parts, CountCauses(c.Causes))
	}
	parts = append(parts, "requirements "+CountVerdicts(reqs))
	if p := c.PropertyCounts(); p != "" {
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}

// PropertyCounts is Counts without the requirements: the invariants, and
// the deviations when there are some ("" for neither), as idemcheck run
// ends with them.
func (c Certification) PropertyCounts() string {
	_, invs, devs := c.verdicts()
	var parts []string
	if len(invs) > 0 {
		parts = append(parts, "invariants "+CountVerdicts(invs))
	}
	if len(devs) > 0 {
		n := map[Verdict]int{}
		for _, v := range devs {
			n[v]++
		}
		d := fmt.Sprintf("deviations (%d): %d FAIL", len(devs), n[Fail])
		if n[Known] > 0 {
			d += fmt.Sprintf(", %d KNOWN", n[Known])
		}
		parts = append(parts, d)
	}
	return strings.Join(parts, "; ")
}

// CountVerdicts is vs counted: "(33): 5 PASS, 9 FAIL, 0 INCONCLUSIVE,
// 1 NOT JUDGED, 2 NOT OFFERED" — PASS, FAIL, INCONCLUSIVE and NOT JUDGED
// always, KNOWN and NOT OFFERED only when some are.
func CountVerdicts(vs []Verdict) string {
	n := map[Verdict]int{}
	for _, v := range vs {
		n[v]++
	}
	var out []string
	for _, v := range []Verdict{Pass, Fail, Inconclusive, NotJudged, Known, Acknowledged, NotOffered} {
		if n[v] > 0 || v == Pass || v == Fail || v == Inconclusive || v == NotJudged {
			out = append(out, fmt.Sprintf("%d %s", n[v], v))
		}
	}
	return fmt.Sprintf("(%d): %s", len(vs), strings.Join(out, ", "))
}

// writeVerdict writes the page's first two lines: the verdict, then the
// counts and the seed.
func writeVerdict(b *strings.Builder, c Certification) {
	fmt.Fprintf(b, "# idemcheck certification: %s\n", c.Overall())
	counts := c.Counts()
	fmt.Fprintf(b, "%s%s", strings.ToUpper(counts[:1]), counts[1:])
	if c.Seed != 0 {
		fmt.Fprintf(b, "; seed %s", code(strconv.FormatUint(c.Seed, 10), false))
	}
	b.WriteString(".\n\n")
}

// writeFailures writes what a reader acts on, before any table: one short
// entry per failure — its reason on one line, its reproduction command on
// the next — requirements first, then the property's deviations, then any
// failed invariant no deviation covers; with no failure, the
// INCONCLUSIVE verdicts and why; then the command that runs it all again.
func writeFailures(b *strings.Builder, c Certification) {
	n := 0
	entry := func(v Verdict, name, reason, reproduce, more string) {
		n++
		indent := strings.Repeat(" ", len(strconv.Itoa(n))+2)
		fmt.Fprintf(b, "%d. %s %s: %s", n, verdictCell(v), code(name, false), mdText(reason))
		var next []string
		if reproduce != "" {
			next = append(next, "reproduce: "+code(reproduce, false))
		}
		if more != "" {
			next = append(next, more)
		}
		if len(next) > 0 {
			fmt.Fprintf(b, "\\\n%s%s", indent, strings.Join(next, " · "))
		}
		b.WriteString("\n")
	}
	for _, r := range c.Requirements {
		if r.Verdict != Fail {
			continue
		}
		reproduce, more := r.Reproduce, ""
		if reproduce == "" {
			reproduce = c.Rerun
		}
		if len(r.Evidence) > 0 {
			more = fmt.Sprintf("[evidence](#%s)", evidenceAnchor(r.ID))
		}
		entry(Fail, r.ID, r.Reason, reproduce, more)
	}
	covered := map[string]bool{}
	for _, d := range c.Deviations {
		covered[d.Invariant] = true
		if d.Verdict != Fail {
			continue
		}
		var more []string
		if d.Curl != "" && c.runDir != "" {
			more = append(more, "curl: "+code("bash "+shellWord(filepath.Join(filepath.Dir(c.runDir), d.Curl)), false))
		}
		if d.Report != "" {
			more = append(more, fmt.Sprintf("[%s](../%s)", mdText(filepath.Base(d.Report)), filepath.ToSlash(d.Report)))
		}
		entry(Fail, d.Invariant, d.Message, d.Replay, strings.Join(more, " · "))
	}
	for _, i := range c.Invariants {
		if i.Verdict == Fail && !covered[i.Name] {
			entry(Fail, i.Name, i.Reason, c.Rerun, "")
		}
	}
	if n == 0 {
		for _, r := range c.Requirements {
			if r.Verdict == Inconclusive {
				entry(Inconclusive, r.ID, r.Reason, "", "")
			}
		}
		for _, i := range c.Invariants {
			if i.Verdict == Inconclusive {
				entry(Inconclusive, i.Name, i.Reason, "", "")
			}
		}
	}
	if n > 0 {
		b.WriteString("\n")
	}
	if c.Rerun != "" {
		fmt.Fprintf(b, "Run it all again, same seed: %s\n\n", code(c.Rerun, false))
	}
}

// shellWord is s as one word for a POSIX shell: as it is when no
// character would be split or expanded, else in single quotes.
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_./:=,@+%", c))
	}) < 0 {
		return s
	}
	return shellQuote(s)
}

// requirementCurl is the curl script of requirement r's evidence: its
// requests sent again, in the order they reached the provider, then the
// charges of each merchant reference (CurlScript).
func requirementCurl(c Certification, r RequirementResult) []byte {
	return CurlScript(Failure{Test: "certification " + c.RunID, Invariant: r.ID, Explanation: r.Reason,
		Provider: c.Provider, Seed: c.Seed, History: models.Snapshot{Exchanges: r.Evidence}})
}
