package reports

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/models"
)

// Mermaid renders h as the body of a Mermaid sequence diagram, without the
// ``` fences: participants Shopper, Client and Provider; a note per step;
// per operation its call and its result; per exchange the request, the
// provider's answer and what the client made of it (a lost response is a
// crossed arrow, a request the fault layer kept from the provider an open
// arrow with a note).
//
// Lines follow the history's order of events: steps in order, and within a
// step the exchanges by Seq and ProviderSeq, an operation's call just
// before its first request and its result just after the last answer it
// got. A provider answer that came after a later step began (the client
// had given up) is drawn in that step. The output depends only on h.
func Mermaid(h models.Snapshot) string { return MermaidViolation(h, "", "") }

// MermaidViolation is Mermaid, ending on the violation: a shaded note over
// every participant naming invariant and the sentence that says what broke
// (none when invariant is ""). The callback, the operator and the
// reconciler are participants of their own between the shopper and the
// client, each present only when it acted; the clock is a note ("+31 min"
// when 31 minutes pass), not an arrow, and so is a gap of a minute or
// more between two operations; step notes span every participant.
func MermaidViolation(h models.Snapshot, invariant, sentence string) string {
	return mermaid(h, nil, invariant, sentence)
}

// mermaid is MermaidViolation; with the client's attempts, the key stored
// for an attempt is a note where the attempt is created (the first
// operation that used it).
func mermaid(h models.Snapshot, attempts []models.PaymentAttempt, invariant, sentence string) string {
	d := &diagram{h: h, stepSeq: map[int]int{}}
	keyOf := map[string]string{}
	for _, a := range attempts {
		keyOf[a.ID.String()] = a.IdempotencyKey
	}
	actors := participants(h)
	span := "Note over " + actors[0] + ",Provider: "
	for _, s := range h.Steps {
		d.add(s.N, math.MinInt, 0, span+
			mm("step "+strconv.Itoa(s.N)+": "+strings.TrimSpace(s.Action+" "+s.Args)))
	}

	ops := opIndex(h)
	exsOf := map[int][]models.Exchange{}
	// An exchange of no recorded operation belongs to the step of the
	// exchange before it, or to a later step begun before it was sent.
	type strayExchange struct {
		ex   models.Exchange
		step int
	}
	var stray []strayExchange
	prev := 0
	for _, ex := range sortedExchanges(h) {
		op, ok := ops[ex.OpID]
		if !ok {
			stray = append(stray, strayExchange{ex, max(prev, d.stepAtTime(ex.SentAt))})
			continue
		}
		prev = op.Step
		exsOf[op.ID] = append(exsOf[op.ID], ex)
		if first, ok := d.stepSeq[op.Step]; !ok || ex.Seq < first {
			d.stepSeq[op.Step] = ex.Seq
		}
	}

	last := map[int]int{} // per step, the latest seq an operation's result took
	var prevAt time.Time  // when the operation before began
	for _, op := range h.Ops {
		exs := exsOf[op.ID]
		who, from := "", participantOf(op.Actor)
		if op.Actor != "" && op.Actor != "shopper" && !strings.EqualFold(op.Actor, from) {
			who = op.Actor + ": " // "click 2", "reconciler (final)"
		}
		seq, sub := last[op.Step], 3 // no request: right after the step's last result
		if len(exs) > 0 {
			seq, sub = exs[0].Seq, -1
		}
		if op.Kind == models.OpAdvance {
			if dur, err := time.ParseDuration(op.Detail); err == nil {
				d.add(op.Step, seq, sub, span+mm("clock: "+gap(dur)))
				prevAt = op.InvokedAt.Add(dur)
				continue
			}
		}
		if !prevAt.IsZero() && !op.InvokedAt.IsZero() && op.InvokedAt.Sub(prevAt) >= time.Minute {
			d.add(op.Step, seq, sub, span+mm(gap(op.InvokedAt.Sub(prevAt))))
		}
		if !op.InvokedAt.IsZero() {
			prevAt = op.InvokedAt
		}
		d.add(op.Step, seq, sub, from+"->>Client: "+mm(who+opLabel(op)))
		if key, ok := keyOf[op.AttemptID]; ok {
			delete(keyOf, op.AttemptID) // shown once, where the attempt is created
			d.add(op.Step, seq, sub, "Note over Client: "+mm("stores attempt, key "+keyShort(key)))
		}
		for _, ex := range exs {
			seq = max(seq, d.exchange(ex, op.Step))
		}
		if len(exs) > 0 {
			sub = 2
		}
		arrow := "Client-->>" + from + ": "
		if op.Lost || !op.Returned {
			arrow = "Client--x" + from + ": "
		}
		res := opOutcome(op)
		if op.ChargeID != "" && op.Returned && !op.Lost {
			res += " " + op.ChargeID
		}
		d.add(op.Step, seq, sub, arrow+mm(who+res))
		last[op.Step] = max(last[op.Step], seq)
	}

	for _, s := range stray {
		d.exchange(s.ex, s.step)
	}

	sort.SliceStable(d.lines, func(i, j int) bool {
		a, b := d.lines[i], d.lines[j]
		switch {
		case a.step != b.step:
			return a.step < b.step
		case a.seq != b.seq:
			return a.seq < b.seq
		case a.sub != b.sub:
			return a.sub < b.sub
		}
		return false
	})
	var b strings.Builder
	b.WriteString("sequenceDiagram\n")
	for _, p := range append(actors, "Client", "Provider") {
		b.WriteString("    participant " + p + "\n")
	}
	for _, l := range d.lines {
		b.WriteString("    " + l.text + "\n")
	}
	if invariant != "" {
		b.WriteString("    rect rgb(255, 224, 224)\n")
		b.WriteString("    " + span + mm("violated: "+invariant+": "+firstLine(sentence)) + "\n")
		b.WriteString("    end\n")
	}
	return b.String()
}

// participantOf is the diagram participant that stands for an actor:
// Callback, Operator and Reconciler have their own; anyone else (the
// shopper, "click 2", a probe) is the Shopper.
func participantOf(actor string) string {
	switch {
	case actor == "callback":
		return "Callback"
	case actor == "operator":
		return "Operator"
	case strings.HasPrefix(actor, "reconciler"):
		return "Reconciler"
	}
	return "Shopper"
}

// participants are the Shopper and, in a fixed order, the other actors of
// h's operations (the clock is a note, not a participant).
func participants(h models.Snapshot) []string {
	seen := map[string]bool{}
	for _, op := range h.Ops {
		if op.Kind != models.OpAdvance {
			seen[participantOf(op.Actor)] = true
		}
	}
	out := []string{"Shopper"}
	for _, p := range []string{"Callback", "Operator", "Reconciler"} {
		if seen[p] {
			out = append(out, p)
		}
	}
	return out
}

// gap is a time gap as a note: "+31 min", "+22 h", "+45 s".
func gap(d time.Duration) string {
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return "+" + strconv.FormatInt(int64(d/time.Hour), 10) + " h"
	case d >= time.Minute:
		return "+" + strconv.FormatInt(int64(d.Round(time.Minute)/time.Minute), 10) + " min"
	}
	return "+" + d.Round(time.Millisecond).String()
}

// diagram collects the lines of a sequence diagram with their place in
// the history's order.
type diagram struct {
	h       models.Snapshot
	stepSeq map[int]int // step number → Seq of its first exchange
	lines   []diagramLine
}

// diagramLine is one line, placed by step, then seq, then sub (-1 an
// operation's call, 0 a request, 1 an answer, 2 an operation's result,
// 3 an operation without requests), then the order it was added in.
type diagramLine struct {
	step, seq, sub int
	text           string
}

func (d *diagram) add(step, seq, sub int, text string) {
	d.lines = append(d.lines, diagramLine{step: step, seq: seq, sub: sub, text: text})
}

// exchange adds the lines of ex, made for an operation of step, and
// returns the seq at which the client got its outcome.
func (d *diagram) exchange(ex models.Exchange, step int) int {
	req := request(ex, true)
	if ex.HasKey {
		req += " key " + shortKey(ex)
	}
	if ex.Forwarded && ex.Fault != "" && ex.Fault != "pass" {
		req += " (" + ex.Fault + ")"
	}
	if !ex.Forwarded {
		d.add(step, ex.Seq, 0, "Client-)Provider: "+mm(req))
		d.add(step, ex.Seq, 1, "Note over Client,Provider: "+mm(notForwarded(ex)))
		return ex.Seq
	}
	d.add(step, ex.Seq, 0, "Client->>Provider: "+mm(req))
	if !ex.ProviderDone {
		switch {
		case ex.Done && ex.Err == "":
			d.add(step, ex.Seq, 1, "Provider-->>Client: "+mm(strconv.Itoa(ex.Status)))
		case ex.Done:
			d.add(step, ex.Seq, 1, "Note over Client,Provider: "+mm(gaveUp(ex.Err)+", provider still processing"))
		default:
			d.add(step, ex.Seq, 1, "Note over Client,Provider: in flight, no answer yet")
		}
		return ex.Seq
	}

	pseq := ex.ProviderSeq
	if pseq == 0 {
		pseq = ex.Seq
	}
	answer := providerSaw(ex)
	switch {
	case !ex.IsPost() && ex.ProviderStatus == 200:
		answer += ": " + found(ex.ProviderChargeID) // what a lookup found
	case ex.ProviderChargeID != "":
		answer += " " + ex.ProviderChargeID
	}
	late := d.answerStep(ex, step, pseq)
	if late != step {
		answer += " (to the request of step " + strconv.Itoa(step) + ")"
	}
	switch {
	case ex.Done && ex.Err == "":
		if ex.Replayed {
			answer += " (replayed)"
		}
		if ex.Status != ex.ProviderStatus {
			answer += " (client saw " + strconv.Itoa(ex.Status) + ")"
		}
		d.add(late, pseq, 1, "Provider-->>Client: "+mm(answer))
		return pseq
	case ex.Done && (ex.DoneAt.IsZero() || ex.ProviderDoneAt.IsZero() || !ex.ProviderDoneAt.After(ex.DoneAt)):
		// The provider answered, then the client got an error instead.
		d.add(late, pseq, 1, "Provider--xClient: "+mm(answer+" (response lost: "+cut(ex.Err, 60)+")"))
		return pseq
	case ex.Done:
		// The client gave up before the provider answered.
		d.add(step, ex.Seq, 1, "Note over Client,Provider: "+mm(gaveUp(ex.Err)))
		d.add(late, pseq, 1, "Provider--xClient: "+mm(answer+" (response lost)"))
		return ex.Seq
	default:
		d.add(late, pseq, 1, "Provider--xClient: "+mm(answer+" (response lost)"))
		return ex.Seq
	}
}

// answerStep is the step in which the provider answered ex, made in step:
// a later step if the answer came after that step began, by seq or by time.
func (d *diagram) answerStep(ex models.Exchange, step, pseq int) int {
	owner := step
	for _, s := range d.h.Steps {
		if s.N <= owner {
			continue
		}
		first, ok := d.stepSeq[s.N]
		if (ok && first < pseq) || (!s.At.IsZero() && !ex.ProviderDoneAt.IsZero() && s.At.Before(ex.ProviderDoneAt)) {
			owner = s.N
		}
	}
	return owner
}

// stepAtTime is the last step begun strictly before t, 0 if none or t is
// unknown.
func (d *diagram) stepAtTime(t time.Time) int {
	n := 0
	if t.IsZero() {
		return n
	}
	for _, s := range d.h.Steps {
		if !s.At.IsZero() && s.At.Before(t) {
			n = max(n, s.N)
		}
	}
	return n
}

// notForwarded describes a request the fault layer answered itself.
func notForwarded(ex models.Exchange) string {
	fault := ex.Fault
	switch {
	case ex.Done && ex.Err == "":
		if fault == "" || fault == strconv.Itoa(ex.Status) {
			fault = strconv.Itoa(ex.Status)
		}
		return fault + " injected, not forwarded"
	case ex.Done:
		return "dropped (" + fault + "), not forwarded: " + cut(ex.Err, 60)
	}
	return "held (" + fault + "), not forwarded yet"
}

// gaveUp says why the client stopped waiting: "client gave up (timeout)".
func gaveUp(err string) string {
	if err == "client gave up" {
		return err
	}
	return "client gave up (" + cut(err, 60) + ")"
}

// found says what a find-by-reference answered: "no charge", "1 charge
// ch_000001", "2 charges ch_000001, ch_000002" (ids as the wire recorded
// them, joined by ",").
func found(ids string) string {
	if ids == "" {
		return "no charge"
	}
	list := strings.Split(ids, ",")
	noun := " charges "
	if len(list) == 1 {
		noun = " charge "
	}
	return strconv.Itoa(len(list)) + noun + strings.Join(list, ", ")
}
