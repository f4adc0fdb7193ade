package reports

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/models"
)

// CertificationMarkdown renders c as one Markdown page that leads with
// what to do: the verdict on line 1, the counts (causes by severity,
// verdicts) and the seed on line 2 (writeVerdict), then one entry per
// cause with its sentence, its reproduction and what shows it
// (writeCauses), or, for a run no one grouped into causes, one entry per
// failure (writeFailures). The tables follow, each with its deciding
// columns first and every row within MaxTableWidth (writeTable): the run
// (provider without credentials, dialect, profile, run id, key form,
// start, duration), the budgets used, requirement × verdict with what
// each checks and where its rule comes from listed below, the invariants
// with the run's coverage, the deviations, and the evidence exchanges,
// one table per requirement.
func CertificationMarkdown(c Certification) []byte {
	var b strings.Builder
	for _, section := range []func(*strings.Builder, Certification){
		writeVerdict, writeLead, writeRunTable, writeBudgets, writeRequirements, writeInvariants, writeDeviations, writeEvidence,
	} {
		section(&b, c)
	}
	return []byte(b.String())
}

// writeLead writes what a reader acts on first: one entry per cause
// when the run grouped its failures into causes (writeCauses), else one
// per failure (writeFailures).
func writeLead(b *strings.Builder, c Certification) {
	if !writeCauses(b, c) {
		writeFailures(b, c)
	}
}

// writeRunTable writes which run this is.
func writeRunTable(b *strings.Builder, c Certification) {
	b.WriteString("## Run\n\n")
	var rows [][]string
	for _, kv := range [][2]string{
		{"provider", RedactURL(c.Provider)}, {"dialect", c.Dialect}, {"profile", c.Profile}, {"run id", c.RunID},
	} {
		v := "none"
		if kv[1] != "" {
			v = code(kv[1], true)
		}
		rows = append(rows, []string{kv[0], v})
	}
	if c.KeyForm != "" {
		rows = append(rows, []string{"key form", code(c.KeyForm, true)})
	}
	if !c.Started.IsZero() {
		rows = append(rows, []string{"started", c.Started.UTC().Format(time.RFC3339)})
	}
	if !c.Started.IsZero() && !c.Finished.IsZero() {
		rows = append(rows, []string{"duration", c.Finished.Sub(c.Started).Round(time.Millisecond).String()})
	}
	writeTable(b, []string{"run", ""}, rows, 1)
}

// writeBudgets writes how much of each budget the run used.
func writeBudgets(b *strings.Builder, c Certification) {
	b.WriteString("## Budgets\n\n")
	if len(c.Budgets) == 0 {
		b.WriteString("none recorded\n\n")
		return
	}
	var rows [][]string
	for _, bu := range c.Budgets {
		limit := bu.Limit
		if limit == "" || limit == "0" {
			limit = "unbounded"
		}
		rows = append(rows, []string{mdText(bu.Name), mdText(bu.Used), mdText(limit)})
	}
	writeTable(b, []string{"budget", "used", "limit"}, rows, 3)
}

// writeRequirements writes a narrow table, verdict first, then per
// requirement what it checks, where the rule comes from, why its verdict
// is not PASS, and links to its evidence.
func writeRequirements(b *strings.Builder, c Certification) {
	b.WriteString("## Requirements\n\n")
	if len(c.Requirements) == 0 {
		b.WriteString("none tested\n\n")
	} else {
		var rows [][]string
		for _, r := range c.Requirements {
			rows = append(rows, []string{verdictCell(r.Verdict), code(r.ID, true), mdText(r.Level), mdText(r.Against),
				strconv.Itoa(len(r.Evidence))})
		}
		writeTable(b, []string{"verdict", "requirement", "level", "against", "exchanges"}, rows, 2)
		b.WriteString("What each checks, where its rule comes from, and why a verdict is not PASS:\n\n")
		for _, r := range c.Requirements {
			fmt.Fprintf(b, "- %s: %s Source: %s.", code(r.ID, false), mdText(r.Title), mdText(r.Source))
			if r.Reason != "" {
				fmt.Fprintf(b, " %s: %s.", r.Verdict, mdText(strings.TrimSuffix(r.Reason, ".")))
			}
			if len(r.Evidence) > 0 {
				fmt.Fprintf(b, " [%s](#%s)", plural(len(r.Evidence), "exchange"), evidenceAnchor(r.ID))
			}
			if r.Curl != "" {
				fmt.Fprintf(b, " · [curl](%s)", r.Curl)
			}
			if r.LinearizabilityFile != "" {
				fmt.Fprintf(b, " · [porcupine's visualisation](%s)", r.LinearizabilityFile)
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	if len(c.BaselineUnused) > 0 {
		var es []string
		for _, e := range c.BaselineUnused {
			es = append(es, code(e, false))
		}
		fmt.Fprintf(b, "Baseline entries unused (they matched no requirement or deviation of this run): %s.\n\n", strings.Join(es, ", "))
	}
}

// writeInvariants writes the run's coverage and a narrow table, verdict
// first; the reasons follow, each once with the invariants it applies to.
func writeInvariants(b *strings.Builder, c Certification) {
	b.WriteString("## Invariants\n\n")
	cov := c.Coverage
	fmt.Fprintf(b, "%s, %s, %s; faults injected: %s; shrinking: %s.\n\n", plural(cov.Sequences, "sequence"), plural(cov.Steps, "step"),
		plural(cov.Exchanges, "wire exchange"), mdText(faultCounts(cov.Faults)), cov.Shrink)
	if len(c.Invariants) == 0 {
		return
	}
	type group struct {
		verdict Verdict
		reason  string
		names   []string
	}
	var groups []*group
	byReason := map[string]*group{}
	var rows [][]string
	for _, i := range c.Invariants {
		rows = append(rows, []string{verdictCell(i.Verdict), code(i.Name, true), strconv.Itoa(i.Evaluations),
			strings.TrimSpace(fmt.Sprintf("%d %s", i.Subjects, mdText(i.Subject)))})
		if i.Reason == "" {
			continue
		}
		k := string(i.Verdict) + "\x00" + i.Reason
		if byReason[k] == nil {
			byReason[k] = &group{verdict: i.Verdict, reason: i.Reason}
			groups = append(groups, byReason[k])
		}
		byReason[k].names = append(byReason[k].names, code(i.Name, false))
	}
	writeTable(b, []string{"verdict", "invariant", "evaluated", "over"}, rows, 2)
	sort.SliceStable(groups, func(x, y int) bool { return groups[x].verdict == Fail && groups[y].verdict != Fail })
	for _, g := range groups {
		fmt.Fprintf(b, "- %s %s: %s\n", g.verdict, strings.Join(g.names, ", "), mdText(g.reason))
	}
	if len(groups) > 0 {
		b.WriteString("\n")
	}
}

// writeDeviations writes the property's failure catalogue, when it found
// something.
func writeDeviations(b *strings.Builder, c Certification) {
	if len(c.Deviations) > 0 {
		// The page sits in its own run folder; deviation paths are relative
		// to the report directory above it.
		b.WriteString(CatalogueMarkdown(c.Deviations, "../"))
	}
}

// writeEvidence writes each requirement's exchanges, one table each.
func writeEvidence(b *strings.Builder, c Certification) {
	var withEvidence []RequirementResult
	for _, r := range c.Requirements {
		if len(r.Evidence) > 0 {
			withEvidence = append(withEvidence, r)
		}
	}
	if len(withEvidence) == 0 {
		return
	}
	b.WriteString("## Evidence\n\n")
	for _, r := range withEvidence {
		fmt.Fprintf(b, "### Evidence: %s\n\n", evidenceHeading(r.ID))
		writeEvidenceTable(b, models.Snapshot{Exchanges: r.Evidence})
	}
}
