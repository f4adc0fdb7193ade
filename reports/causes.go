package reports

import (
	"fmt"
	"strings"
)

// Severity is how much a cause can cost a shopper or a merchant, the
// page's order: Severities lists them, worst first.
type Severity string

// The severities, worst first (issue 24, item 5).
const (
	// ChargesTwice: a shopper can be charged twice for one payment.
	ChargesTwice Severity = "charges twice"
	// LosesPayment: a payment can be lost or blocked (a retry never
	// settles, another account's payment is refused), never charged twice.
	LosesPayment Severity = "loses or blocks a payment"
	// RefusesWrongly: a valid request is refused; its one charge is kept.
	RefusesWrongly Severity = "refuses wrongly"
	// FormatOnly: what is on the wire differs from the contract (a key
	// form, a header, an error's shape); no payment is at stake.
	FormatOnly Severity = "format only"
)

// Severities are the severities, worst first.
var Severities = []Severity{ChargesTwice, LosesPayment, RefusesWrongly, FormatOnly}

// Cause is one thing wrong with a provider, with every verdict of the run
// that shows it: a certification page opens with one entry per cause,
// worst first, so that one bug seen by nine requirements and two
// invariants reads as one bug.
type Cause struct {
	// ID is the cause's stable name: "replay-charges-again", a
	// requirement id, "refused-417" (a status-only refusal), or a
	// deviation's invariant.
	ID string `json:"id"`
	// Sentence says what is wrong in plain words.
	Sentence string   `json:"sentence"`
	Severity Severity `json:"severity"`
	// Requirements are the ids of the FAIL requirements that show it;
	// Invariants the names of the FAIL invariants (and deviations) that
	// show it.
	Requirements []string `json:"requirements"`
	Invariants   []string `json:"invariants"`
	// Explains are the requirements it leaves NOT JUDGED: their
	// judgement needs what this cause broke (a replay).
	Explains []string `json:"explains,omitempty"`
	// Reason is the first showing verdict's own sentence, with its
	// particulars (charge ids, statuses).
	Reason string `json:"reason,omitempty"`
	// Reproduce is the command that shows it: the first showing
	// requirement's curl script, else the first deviation's replay line.
	Reproduce string `json:"reproduce,omitempty"`
}

// reproduceCauses is c.Causes, each reproduced by the curl script of the
// first requirement that shows it when that has one (it sends a few
// requests; a deviation's replay runs the property), else as it was.
func reproduceCauses(c Certification) []Cause {
	script := map[string]string{}
	for _, r := range c.Requirements {
		script[r.ID] = r.Reproduce
	}
	out := append([]Cause(nil), c.Causes...)
	for i, k := range out {
		for _, id := range k.Requirements {
			if script[id] != "" {
				out[i].Reproduce = script[id]
				break
			}
		}
	}
	return out
}

// CountCauses is causes counted by severity, worst first, each severity
// that has some: "causes (2): 1 charges twice, 1 format only"; "causes
// (0)" for none.
func CountCauses(causes []Cause) string {
	n := map[Severity]int{}
	for _, c := range causes {
		n[c.Severity]++
	}
	var parts []string
	for _, s := range Severities {
		if n[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[s], s))
		}
	}
	if len(parts) == 0 {
		return fmt.Sprintf("causes (%d)", len(causes))
	}
	return fmt.Sprintf("causes (%d): %s", len(causes), strings.Join(parts, ", "))
}

// writeCauses writes the page's lead when the run named causes: one
// entry per cause, worst first — its severity, id and sentence, the
// verdict that first showed it with its particulars; then what shows it
// (requirements, invariants), what it leaves NOT JUDGED, and the command
// that reproduces it. It reports false, writing nothing, when there are
// no causes (writeFailures leads then).
func writeCauses(b *strings.Builder, c Certification) bool {
	if len(c.Causes) == 0 {
		return false
	}
	for i, cause := range c.Causes {
		indent := strings.Repeat(" ", len(fmt.Sprint(i+1))+2)
		fmt.Fprintf(b, "%d. **%s** %s: %s", i+1, cause.Severity, code(cause.ID, false), mdText(cause.Sentence))
		if cause.Reason != "" {
			fmt.Fprintf(b, " (%s)", mdText(strings.TrimSuffix(cause.Reason, ".")))
		}
		var next []string
		if cause.Reproduce != "" {
			next = append(next, "reproduce: "+code(cause.Reproduce, false))
		}
		if s := names("shown by", cause.Requirements, cause.Invariants); s != "" {
			next = append(next, s)
		}
		if s := names("leaves NOT JUDGED", cause.Explains, nil); s != "" {
			next = append(next, s)
		}
		for _, n := range next {
			fmt.Fprintf(b, "\\\n%s%s", indent, n)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	if c.Rerun != "" {
		fmt.Fprintf(b, "Run it all again, same seed: %s\n\n", code(c.Rerun, false))
	}
	return true
}

// names is "shown by `a`, `b` and the invariants `c`": label, then the
// requirement ids and invariant names as code; "" for none.
func names(label string, reqs, invs []string) string {
	var parts []string
	for _, r := range reqs {
		parts = append(parts, code(r, false))
	}
	for _, i := range invs {
		parts = append(parts, "invariant "+code(i, false))
	}
	if len(parts) == 0 {
		return ""
	}
	return label + " " + strings.Join(parts, ", ")
}
