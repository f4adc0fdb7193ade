package reports

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// sumStats adds up the parts' statistics: coverage, faults by kind, and
// per invariant (in the first part's order, then any new one) evaluations
// and subjects, with the merged verdict of mergedVerdict.
func sumStats(parts []MergePart, now time.Time) RunStats {
	s := RunStats{Test: MergeKind, Started: now.UTC(), Coverage: Coverage{Faults: map[string]int{}}}
	var order []string
	byName := map[string]*InvariantResult{}
	verdicts := map[string][]Verdict{}
	reasons := map[string][]string{}
	stopped := false
	for _, p := range parts {
		if p.Entry.Verdict == Inconclusive {
			stopped = true
		}
		if p.Stats == nil {
			continue
		}
		ps := p.Stats
		s.Seconds += ps.Seconds
		s.Checks += ps.Checks
		s.Coverage.Sequences += ps.Coverage.Sequences
		s.Coverage.Steps += ps.Coverage.Steps
		s.Coverage.Exchanges += ps.Coverage.Exchanges
		s.Coverage.Shrink = s.Coverage.Shrink.Add(ps.Coverage.Shrink)
		for k, v := range ps.Coverage.Faults {
			s.Coverage.Faults[k] += v
		}
		for _, i := range ps.Invariants {
			r, ok := byName[i.Name]
			if !ok {
				r = &InvariantResult{Name: i.Name, Subject: i.Subject}
				byName[i.Name] = r
				order = append(order, i.Name)
			}
			r.Evaluations += i.Evaluations
			r.Subjects += i.Subjects
			verdicts[i.Name] = append(verdicts[i.Name], i.Verdict)
			if i.Reason != "" {
				reasons[i.Name] = append(reasons[i.Name], p.Folder+": "+i.Reason)
			}
		}
	}
	for _, name := range order {
		r := byName[name]
		r.Verdict, r.Reason = mergedVerdict(*r, verdicts[name], reasons[name], stopped, s.Coverage.Sequences)
		s.Invariants = append(s.Invariants, *r)
	}
	return s
}

// mergedVerdict is an invariant's verdict over every part: FAIL if it
// failed in one, else KNOWN if the baseline acknowledged it in one, else
// NOT JUDGED if no part judged it, else INCONCLUSIVE if a part that
// stopped early left it so; else judged on the sums, as one run would
// be: INCONCLUSIVE never evaluated or held vacuously (no subject in any
// part), PASS otherwise.
func mergedVerdict(sum InvariantResult, vs []Verdict, reasons []string, stopped bool, sequences int) (Verdict, string) {
	has := func(want Verdict) bool {
		for _, v := range vs {
			if v == want {
				return true
			}
		}
		return false
	}
	reason := strings.Join(reasons, "; ")
	allNotJudged := len(vs) > 0
	for _, v := range vs {
		allNotJudged = allNotJudged && v == NotJudged
	}
	switch {
	case has(Fail):
		return Fail, reason
	case has(Known):
		return Known, reason
	case allNotJudged:
		return NotJudged, reason
	case stopped && has(Inconclusive):
		return Inconclusive, reason
	case sum.Evaluations == 0:
		return Inconclusive, "never evaluated"
	case sum.Subjects == 0:
		return Inconclusive, fmt.Sprintf("held vacuously: no %s in %d sequences", sum.Subject, sequences)
	}
	return Pass, ""
}

// StatsSummary renders s as a run prints its statistics: the coverage
// line, the faults by kind, and a line per invariant.
func StatsSummary(s RunStats) string {
	var b strings.Builder
	c := s.Coverage
	fmt.Fprintf(&b, "idemcheck: %d sequences, %d steps, %d wire exchanges\n", c.Sequences, c.Steps, c.Exchanges)
	kinds := make([]string, 0, len(c.Faults))
	for k, v := range c.Faults {
		kinds = append(kinds, fmt.Sprintf("%s×%d", k, v))
	}
	sort.Strings(kinds)
	fmt.Fprintf(&b, "faults injected: %s\n", orNone(strings.Join(kinds, ", ")))
	for _, i := range s.Invariants {
		if i.Verdict == NotJudged {
			fmt.Fprintf(&b, "  %-30s not judged: %s\n", i.Name, i.Reason)
			continue
		}
		fmt.Fprintf(&b, "  %-30s evaluated %6d times over %6d %s\n", i.Name, i.Evaluations, i.Subjects, i.Subject)
	}
	return b.String()
}

// mergedMarkdown is the merged run's summary.md: the verdict, the summed
// statistics, the invariants' merged verdicts and a row per part.
func mergedMarkdown(m Merged) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# idemcheck merge: %d runs, %s\n\n", len(m.Parts), m.Verdict)
	wall := 0.0
	for _, p := range m.Parts {
		if p.Stats != nil {
			wall = max(wall, p.Stats.Seconds)
		}
	}
	fmt.Fprintf(&b, "Wall time: %.1f s summed over the runs (one after another), %.1f s for the longest (all at once).\n\n", m.Stats.Seconds, wall)
	writeFenced(&b, "", StatsSummary(m.Stats))
	b.WriteString("\n## Invariants\n\n| invariant | verdict | evaluations | subjects | reason |\n|---|---|---|---|---|\n")
	for _, i := range m.Stats.Invariants {
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %s |\n", mdText(i.Name), verdictCell(i.Verdict), i.Evaluations, i.Subjects, mdText(i.Reason))
	}
	b.WriteString("\n## Runs\n\n| run | kind | shard | verdict | sequences | steps | exchanges | wall time (s) |\n|---|---|---|---|---|---|---|---|\n")
	for _, p := range m.Parts {
		link := p.Folder + "/" + p.Entry.Report
		if p.Stats == nil {
			why := "no statistics kept"
			if p.Entry.Kind == "certification" {
				why = "counted in its property run"
			}
			fmt.Fprintf(&b, "| [%s](%s) | %s | | %s | %s | | | |\n", mdText(p.Entry.RunID), link, mdText(p.Entry.Kind), verdictCell(p.Entry.Verdict), why)
			continue
		}
		c := p.Stats.Coverage
		fmt.Fprintf(&b, "| [%s](%s) | %s | %s | %s | %d | %d | %d | %.1f |\n", mdText(p.Entry.RunID), link, mdText(p.Entry.Kind),
			mdText(p.Stats.Shard), verdictCell(p.Entry.Verdict), c.Sequences, c.Steps, c.Exchanges, p.Stats.Seconds)
	}
	return []byte(b.String())
}
