package reports

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/models"
)

// CertificationMarkdown renders c as one Markdown page that leads with
// what to do: the verdict on line 1, the counts and the seed on line 2
// (writeVerdict), then one entry per failure with its reason and the
// command that reproduces it (writeFailures). The tables follow, each with its deciding
// columns first and narrow enough for a 100-column terminal: the run
// (provider without credentials, dialect, profile, run id, key form, start,
// duration), the budgets used, requirement × verdict with what each
// checks and where its rule comes from listed below, the invariants with
// the run's coverage, the deviations, and the evidence exchanges, one
// table per requirement.
func CertificationMarkdown(c Certification) []byte {
	var b strings.Builder
	for _, section := range []func(*strings.Builder, Certification){
		writeVerdict, // a section of causes belongs here, after the counts
		writeFailures, writeRunTable, writeBudgets, writeRequirements, writeInvariants, writeDeviations, writeEvidence,
	} {
		section(&b, c)
	}
	return []byte(b.String())
}

// writeRunTable writes which run this is.
func writeRunTable(b *strings.Builder, c Certification) {
	b.WriteString("## Run\n\n| run | |\n|---|---|\n")
	for _, kv := range [][2]string{
		{"provider", RedactURL(c.Provider)}, {"dialect", c.Dialect}, {"profile", c.Profile}, {"run id", c.RunID},
	} {
		v := "none"
		if kv[1] != "" {
			v = code(kv[1], true)
		}
		fmt.Fprintf(b, "| %s | %s |\n", kv[0], v)
	}
	if c.KeyForm != "" {
		fmt.Fprintf(b, "| key form | %s |\n", code(c.KeyForm, true))
	}
	if !c.Started.IsZero() {
		fmt.Fprintf(b, "| started | %s |\n", c.Started.UTC().Format(time.RFC3339))
	}
	if !c.Started.IsZero() && !c.Finished.IsZero() {
		fmt.Fprintf(b, "| duration | %s |\n", c.Finished.Sub(c.Started).Round(time.Millisecond))
	}
	b.WriteString("\n")
}

// writeBudgets writes how much of each budget the run used.
func writeBudgets(b *strings.Builder, c Certification) {
	b.WriteString("## Budgets\n\n")
	if len(c.Budgets) == 0 {
		b.WriteString("none recorded\n\n")
		return
	}
	b.WriteString("| budget | used | limit |\n|---|---|---|\n")
	for _, bu := range c.Budgets {
		limit := bu.Limit
		if limit == "" || limit == "0" {
			limit = "unbounded"
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", mdText(bu.Name), mdText(bu.Used), mdText(limit))
	}
	b.WriteString("\n")
}

// writeRequirements writes a narrow table, verdict first, then per
// requirement what it checks, where the rule comes from, why its verdict
// is not PASS, and links to its evidence.
func writeRequirements(b *strings.Builder, c Certification) {
	b.WriteString("## Requirements\n\n")
	if len(c.Requirements) == 0 {
		b.WriteString("none tested\n\n")
	} else {
		b.WriteString("| verdict | requirement | level | against | exchanges |\n|---|---|---|---|---|\n")
		for _, r := range c.Requirements {
			fmt.Fprintf(b, "| %s | %s | %s | %s | %d |\n", verdictCell(r.Verdict), code(r.ID, true),
				mdText(r.Level), mdText(r.Against), len(r.Evidence))
		}
		b.WriteString("\nWhat each checks, where its rule comes from, and why a verdict is not PASS:\n\n")
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
	b.WriteString("| verdict | invariant | evaluated | over |\n|---|---|---|---|\n")
	type group struct {
		verdict Verdict
		reason  string
		names   []string
	}
	var groups []*group
	byReason := map[string]*group{}
	for _, i := range c.Invariants {
		fmt.Fprintf(b, "| %s | %s | %d | %d %s |\n", verdictCell(i.Verdict), code(i.Name, true),
			i.Evaluations, i.Subjects, mdText(i.Subject))
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
	b.WriteString("\n")
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
		writeExchanges(b, models.Snapshot{Exchanges: r.Evidence})
	}
}
