package reports

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/models"
)

// Markdown renders f as a report for people: what broke, how to replay it,
// the shopper's steps and their operations, the fault schedule, every wire
// exchange (runs of identical ones folded into one "×N" row), a Mermaid
// sequence diagram, and the client's and the provider's final state.
// Amounts are in minor units; times are offsets from the first step.
func Markdown(f Failure) []byte {
	var b strings.Builder
	h := f.History

	fmt.Fprintf(&b, "# idemcheck: %s violated\n\n", mdText(f.Invariant))
	if f.Explanation != "" {
		fmt.Fprintf(&b, "**In plain words:** %s\n\n", mdText(f.Explanation))
	}
	for line := range strings.SplitSeq(strings.TrimRight(f.Message, "\n"), "\n") {
		line = mdText(line)
		if strings.HasPrefix(line, "#") {
			line = `\` + line
		}
		b.WriteString(strings.TrimRight("> "+line, " ") + "\n")
	}
	b.WriteString("\n")
	if f.Verdict == Known {
		b.WriteString("**KNOWN:** the run's baseline acknowledges this deviation; it does not fail the run.\n\n")
	}
	if f.Category != "" {
		fmt.Fprintf(&b, "Category (what a baseline lists): %s\n\n", code(f.Category, false))
	}
	var about []string
	if f.Test != "" {
		about = append(about, "Test "+code(f.Test, false))
	}
	about = append(about, "provider "+code(RedactURL(f.Provider), false))
	if f.Mutant != "" {
		about = append(about, "mutant "+code(f.Mutant, false))
	}
	about = append(about, plural(len(h.Steps), "shopper step"))
	if f.Seed != 0 {
		about = append(about, "seed "+code(strconv.FormatUint(f.Seed, 10), false))
	}
	b.WriteString(strings.Join(about, " · ") + "\n\n")

	if f.Compare != nil {
		writeComparison(&b, *f.Compare)
	}
	b.WriteString("## How to replay\n\n")
	if f.Replay == "" {
		b.WriteString("No replay command was recorded.\n\n")
	} else {
		writeFenced(&b, "sh", f.Replay)
	}
	if f.Seed != 0 {
		fmt.Fprintf(&b, "The failure was first found under %s; the fail file replays the shrunk sequence directly",
			code("-rapid.seed="+strconv.FormatUint(f.Seed, 10), false))
		if f.Provider != "" && f.Provider != "embedded" {
			b.WriteString(". Against this provider time is real, so a replay draws the same steps and faults but their timing, and the provider's state, differ: it may pass, or fail another way, and may run fewer steps than the sequence below when an answer takes it another way")
			if f.Reproducibility != nil {
				b.WriteString(" (the reproducibility check below says how often it came back)")
			} else {
				b.WriteString(" (`IDEMCHECK_REPRODUCE=10` replays it 10 times and says how often it comes back)")
			}
		}
		b.WriteString(".\n\n")
	}
	for _, n := range f.Notes {
		fmt.Fprintf(&b, "> **Note:** %s\n\n", n)
	}
	if r := f.Reproducibility; r != nil {
		fmt.Fprintf(&b, "Reproducibility: **%s**", r)
		if r.Flaky() {
			b.WriteString(" — some replays of the same sequence passed: the failure depends on timing or on something else outside the seed")
		}
		b.WriteString(".\n\n")
	}

	b.WriteString("## Shopper steps\n\n")
	writeSteps(&b, h)

	b.WriteString("## Fault schedule\n\n")
	if len(f.Schedule) == 0 {
		b.WriteString("none\n\n")
	} else {
		b.WriteString("Each step that sends requests draws its own schedule: entry n is what happened to that step's n-th request.\n\n")
		for i, s := range f.Schedule {
			fmt.Fprintf(&b, "%d. %s\n", i+1, mdText(s))
		}
		b.WriteString("\n")
	}

	b.WriteString("## Wire exchanges\n\n")
	writeExchanges(&b, h)

	b.WriteString("## Sequence diagram\n\n")
	sentence := f.Explanation
	if sentence == "" {
		sentence = f.Message
	}
	writeFenced(&b, "mermaid", mermaid(h, f.Attempts, f.Invariant, sentence))

	b.WriteString("## Final state\n\n")
	writeFinalState(&b, f)
	return []byte(b.String())
}

// writeSteps writes the numbered list of steps, each with its operations.
func writeSteps(b *strings.Builder, h models.Snapshot) {
	ops := byStep(h.Ops)
	if len(h.Steps) == 0 && len(h.Ops) == 0 {
		b.WriteString("none\n\n")
		return
	}
	for _, s := range h.Steps {
		marker := strconv.Itoa(s.N) + ". "
		fmt.Fprintf(b, "%s%s\n", marker, mdText(strings.TrimSpace(s.Action+" "+s.Args)))
		for _, op := range ops[s.N] {
			fmt.Fprintf(b, "%s- %s\n", strings.Repeat(" ", len(marker)), opLine(op))
		}
	}
	b.WriteString("\n")
	if orphans := orphanSteps(h); len(orphans) > 0 {
		b.WriteString("Operations outside any recorded step:\n\n")
		for _, n := range orphans {
			for _, op := range ops[n] {
				fmt.Fprintf(b, "- step %d: %s\n", n, opLine(op))
			}
		}
		b.WriteString("\n")
	}
}

// opLine is one operation in the step list: "op 2, shopper: checkout order
// 1 (visa) → PaymentPending 202, charge `ch_1`".
func opLine(op models.Operation) string {
	s := fmt.Sprintf("op %d", op.ID)
	if op.Actor != "" {
		s += ", " + mdText(op.Actor)
	}
	s += ": " + mdText(opLabel(op)) + " → " + mdText(opOutcome(op))
	if op.ChargeID != "" && op.Returned && !op.Lost {
		s += ", charge " + code(op.ChargeID, false)
	}
	if op.Detail != "" {
		s += " — " + mdText(op.Detail)
	}
	return s
}

// keyCell is the short Idempotency-Key of ex as code, or "(none)";
// "(journaled)" follows a key read from the provider's own journal
// (WireMock's request log) rather than from the client's record.
func keyCell(ex models.Exchange) string {
	journaled := ""
	if ex.Journaled {
		journaled = " (journaled)"
	}
	if !ex.HasKey {
		return "(none)" + journaled
	}
	return code(shortKey(ex), true) + journaled
}

// providerSaw is what the provider made of ex.
func providerSaw(ex models.Exchange) string {
	switch {
	case !ex.Forwarded:
		return "not reached"
	case !ex.ProviderDone:
		return "processing"
	case ex.ProviderStatus == 0:
		return "answered"
	}
	return strconv.Itoa(ex.ProviderStatus)
}

// clientSaw is what the client got for ex: a status, an error, or nothing.
func clientSaw(ex models.Exchange) string {
	switch {
	case !ex.Done:
		return "no answer yet"
	case ex.Err != "":
		return ex.Err
	}
	return strconv.Itoa(ex.Status)
}

// chargeCell names the charge of ex, saying when only the provider knew it.
func chargeCell(ex models.Exchange) string {
	switch {
	case ex.ChargeID != "" && ex.ProviderChargeID != "" && ex.ProviderChargeID != ex.ChargeID:
		return code(ex.ChargeID, true) + " (provider: " + code(ex.ProviderChargeID, true) + ")"
	case ex.ChargeID != "":
		return code(ex.ChargeID, true)
	case ex.ProviderChargeID != "":
		return code(ex.ProviderChargeID, true) + " (client never saw it)"
	}
	return ""
}

// writeFinalState writes the client's orders and attempts and the
// provider's charges.
func writeFinalState(b *strings.Builder, f Failure) {
	b.WriteString("### Client\n\n**Orders**\n\n")
	if len(f.Orders) == 0 {
		b.WriteString("No orders.\n\n")
	} else {
		b.WriteString("| order | status | total | charge |\n|---|---|---|---|\n")
		for _, o := range f.Orders {
			fmt.Fprintf(b, "| %d | %s | %d %s | %s |\n", o.ID, mdText(string(o.Status)),
				o.Total, mdText(o.Currency), optCode(o.ProviderChargeID))
		}
		b.WriteString("\n")
	}
	b.WriteString("**Payment attempts**\n\n")
	if len(f.Attempts) == 0 {
		b.WriteString("No payment attempts.\n\n")
	} else {
		b.WriteString("| order | key | amount | status | charge |\n|---|---|---|---|---|\n")
		for _, a := range f.Attempts {
			fmt.Fprintf(b, "| %d | %s | %d %s | %s | %s |\n", a.OrderID, code(keyShort(a.IdempotencyKey), true),
				a.Amount, mdText(a.Currency), mdText(string(a.Status)), optCode(a.ProviderChargeID))
		}
		b.WriteString("\n")
	}
	b.WriteString("### Provider\n\n**Charges**\n\n")
	if len(f.Charges) == 0 {
		b.WriteString("No charges.\n")
		return
	}
	b.WriteString("| charge | amount | currency | reference | status |\n|---|---|---|---|---|\n")
	for _, c := range f.Charges {
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s |\n", code(c.ID, true), c.Amount, mdText(c.Currency),
			optCode(c.MerchantReference), mdText(c.Status))
	}
}

// plural is "1 shopper step" or "n shopper steps".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// origin is the time offsets count from: the first step's time, or the
// first exchange's when no step was recorded.
func origin(h models.Snapshot) time.Time {
	if len(h.Steps) > 0 {
		return h.Steps[0].At
	}
	if exs := sortedExchanges(h); len(exs) > 0 {
		return exs[0].SentAt
	}
	return time.Time{}
}

// offset is t relative to base: "+3s", "+1m2.5s"; "" when either is unknown.
func offset(base, t time.Time) string {
	if base.IsZero() || t.IsZero() {
		return ""
	}
	d := t.Sub(base)
	if d < 0 {
		return d.String()
	}
	return "+" + d.String()
}
