package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/models"
)

// Overall is the run's verdict: FAIL when a requirement, an invariant or
// a deviation failed, else INCONCLUSIVE when one could not be decided or
// nothing was tested at all, else KNOWN when the only deviations found are
// in the baseline, else PASS.
func (c Certification) Overall() Verdict {
	reqs, invs, devs := c.verdicts()
	return worst(append(append(reqs, invs...), devs...))
}

// verdicts are c's requirements', invariants' and deviations' verdicts,
// in their order.
func (c Certification) verdicts() (reqs, invs, devs []Verdict) {
	for _, r := range c.Requirements {
		reqs = append(reqs, r.Verdict)
	}
	for _, i := range c.Invariants {
		invs = append(invs, i.Verdict)
	}
	for _, d := range c.Deviations {
		devs = append(devs, d.Verdict)
	}
	return reqs, invs, devs
}

// worst is FAIL if any of vs is, else INCONCLUSIVE if any is neither PASS,
// NOT OFFERED, NOT JUDGED, KNOWN nor ACKNOWLEDGED, or if none is PASS or
// KNOWN (nothing was judged), else KNOWN if any is KNOWN or ACKNOWLEDGED,
// else PASS (a MAY not offered, or a
// requirement the setup rules out, never fails nor clouds a run).
func worst(vs []Verdict) Verdict {
	out, judged := Pass, false
	for _, v := range vs {
		switch {
		case v == Fail:
			return Fail
		case v == Known:
			judged = true
			if out == Pass {
				out = Known
			}
		case v == Acknowledged: // not judged, but an open item the baseline lists
			if out == Pass {
				out = Known
			}
		case v == Pass:
			judged = true
		case v != NotOffered && v != NotJudged:
			out = Inconclusive
		}
	}
	if !judged {
		return Inconclusive
	}
	return out
}

// verdictCell shows a verdict in a table, a FAIL in bold.
func verdictCell(v Verdict) string {
	if v == Fail {
		return "**FAIL**"
	}
	return mdText(string(v))
}

// faultCounts is "503×3, lose-response×1" in name order, "none" if empty.
func faultCounts(m map[string]int) string {
	var out []string
	for k, v := range m {
		if v > 0 {
			out = append(out, fmt.Sprintf("%s×%d", k, v))
		}
	}
	if len(out) == 0 {
		return "none"
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// evidenceHeading is a requirement id as an evidence heading: the
// characters GitHub keeps in an anchor (letters, digits, '-', '_').
func evidenceHeading(id string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		}
		return '-'
	}, id)
}

// evidenceAnchor is the anchor GitHub gives "### Evidence: <id>".
func evidenceAnchor(id string) string {
	return "evidence-" + strings.ToLower(evidenceHeading(id))
}

// CertificationJSON renders c as indented JSON with "verdict" (Overall)
// first; evidence card hashes are cut to 8 characters and nil slices
// written as empty arrays. c is not changed.
func CertificationJSON(c Certification) ([]byte, error) {
	c.Budgets = orEmpty(c.Budgets)
	c.Invariants = orEmpty(c.Invariants)
	causes := make([]Cause, 0, len(c.Causes))
	for _, k := range c.Causes {
		k.Requirements, k.Invariants = orEmpty(k.Requirements), orEmpty(k.Invariants)
		causes = append(causes, k)
	}
	c.Causes = causes
	if c.Coverage.Faults == nil {
		c.Coverage.Faults = map[string]int{}
	}
	reqs := make([]RequirementResult, 0, len(c.Requirements))
	for _, r := range c.Requirements {
		r.Evidence = append([]models.Exchange(nil), r.Evidence...)
		for i := range r.Evidence {
			r.Evidence[i].CardHash = cutHash(r.Evidence[i].CardHash)
		}
		reqs = append(reqs, r)
	}
	c.Requirements = reqs
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	out := struct {
		Verdict Verdict `json:"verdict"`
		Certification
	}{c.Overall(), c}
	if err := enc.Encode(out); err != nil {
		return nil, fmt.Errorf("reports: encoding certification %s as JSON: %w", c.RunID, err)
	}
	return buf.Bytes(), nil
}

// CertificationJUnit renders c as JUnit XML: a testsuite "requirements"
// with one testcase per requirement (classname idemcheck.requirements.<against>)
// and a testsuite "invariants" with one per invariant; FAIL is a <failure>,
// INCONCLUSIVE a <skipped>, each with its reason. A requirement's case
// time is RequirementResult.Seconds; an invariant's is 0 (the invariants
// are evaluated together, after every step); suite times are the run's
// duration in seconds.
func CertificationJUnit(c Certification) ([]byte, error) {
	var d time.Duration
	if !c.Started.IsZero() && c.Finished.After(c.Started) {
		d = c.Finished.Sub(c.Started)
	}
	var reqs, invs []JUnitCase
	for _, r := range c.Requirements {
		class := "idemcheck.requirements"
		if r.Against != "" {
			class += "." + r.Against
		}
		text := strings.TrimSpace(r.Title + "\nsource: " + r.Source + "\n" + r.Reason)
		if len(r.Evidence) > 0 {
			text += fmt.Sprintf("\nevidence: %s in the certification report", plural(len(r.Evidence), "exchange"))
		}
		c := verdictCase(r.ID, class, r.Verdict, r.Reason, text)
		c.Time = fmt.Sprintf("%.3f", max(r.Seconds, 0))
		reqs = append(reqs, c)
	}
	for _, i := range c.Invariants {
		text := fmt.Sprintf("evaluated %d times over %d %s\n%s", i.Evaluations, i.Subjects, i.Subject, i.Reason)
		invs = append(invs, verdictCase(i.Name, "idemcheck.invariants", i.Verdict, i.Reason, strings.TrimSpace(text)))
	}
	name := "idemcheck certification " + c.RunID
	return encodeJUnit(name, d,
		junitSuite(name+": requirements", c.Started, d, reqs),
		junitSuite(name+": invariants", c.Started, d, invs))
}

// verdictCase is a testcase for verdict v: passed, failed or skipped.
func verdictCase(name, class string, v Verdict, reason, text string) JUnitCase {
	c := JUnitCase{Name: name, Classname: class, Time: seconds(0)}
	if reason == "" {
		reason = string(v)
	}
	switch v {
	case Pass:
		c.SystemOut = text
	case Fail:
		c.Failure = &JUnitMessage{Message: firstLine(reason), Type: string(Fail), Text: text}
	default:
		c.Skipped = &JUnitMessage{Message: firstLine(reason), Text: text}
	}
	return c
}
