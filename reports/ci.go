package reports

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"unicode"
)

// StepSummaryEnv names the file GitHub Actions renders as the job summary;
// a step appends Markdown to it.
const StepSummaryEnv = "GITHUB_STEP_SUMMARY"

// AppendStepSummary appends md, followed by a blank line, to the file named
// by GITHUB_STEP_SUMMARY; it does nothing and reports false when the
// variable is unset or empty.
func AppendStepSummary(md []byte) (bool, error) {
	path := os.Getenv(StepSummaryEnv)
	if path == "" {
		return false, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return false, fmt.Errorf("reports: job summary: %w", err)
	}
	_, werr := f.Write(append(Scrub(md), '\n'))
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return false, fmt.Errorf("reports: job summary: %w", werr)
	}
	return true, nil
}

// FailureSummary is the short Markdown a CI job summary gets for failure f
// whose full report is at report: the invariant, the plain-words
// explanation and the message, the run's particulars, reproducibility, the
// replay command and where the report is.
func FailureSummary(f Failure, report string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "### idemcheck: %s violated\n\n", mdText(f.Invariant))
	if f.Explanation != "" {
		b.WriteString(mdText(f.Explanation) + "\n\n")
	}
	fmt.Fprintf(&b, "> %s\n\n", mdText(firstLine(f.Message)))
	var about []string
	for _, kv := range [][2]string{{"test", f.Test}, {"mutant", f.Mutant}, {"provider", RedactURL(f.Provider)}} {
		if kv[1] != "" {
			about = append(about, kv[0]+" "+code(kv[1], false))
		}
	}
	about = append(about, plural(len(f.History.Steps), "shopper step"))
	if f.Seed != 0 {
		about = append(about, "seed "+code(strconv.FormatUint(f.Seed, 10), false))
	}
	if f.Reproducibility != nil {
		about = append(about, "**"+f.Reproducibility.String()+"**")
	}
	b.WriteString(strings.Join(about, " · ") + "\n\n")
	if f.Replay != "" {
		writeFenced(&b, "sh", f.Replay)
	}
	if report != "" {
		fmt.Fprintf(&b, "Report: %s (with %s and %s beside it; the job's artefact holds the folder).\n",
			code(report, false), code("failure.curl.sh", false), code("failure.junit.xml", false))
	}
	return []byte(b.String())
}

// Progress prints the progress of a long run, so that it is never silent:
// one line per completed requirement ("idemcheck: [3/12] PASS
// replay-returns-first-response") and a running count of sequences every
// Every sequences ("idemcheck: 50 sequences run"). Lines hold no times, so
// a run's progress reads the same every time. It is safe for concurrent
// use; each line is written whole.
type Progress struct {
	mu      sync.Mutex // guards w, total, every, done, seqs, left, last, shrinks
	w       io.Writer
	total   int
	every   int
	done    int
	seqs    int
	left    func() string
	last    string // the previous requirement line's verdict and reason
	shrinks int    // shrink checks counted by Shrink
	// shrunkInv and shrunkMin are the invariant the shrink lines speak of
	// and the shortest length they printed for it; the last was printed
	// at shrink check shrunkAt, and the next without a change is due beat
	// checks after it.
	shrunkInv string
	shrunkMin int
	shrunkAt  int
	beat      int
}

// SetLeft makes each count line end with what left returns ("idemcheck:
// 20 sequences run; 140 requests and 61 charges left"): the budgets a
// remote run has left.
func (p *Progress) SetLeft(left func() string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.left = left
}

// DefaultProgressEvery is how many sequences pass between two count lines.
const DefaultProgressEvery = 10

// NewProgress returns a Progress writing to w for a run of total
// requirements (0 when unknown), with a count line every `every`
// sequences (DefaultProgressEvery when every <= 0).
func NewProgress(w io.Writer, total, every int) *Progress {
	if every <= 0 {
		every = DefaultProgressEvery
	}
	return &Progress{w: w, total: total, every: every}
}

// Requirement prints the line of a completed requirement: its number, its
// verdict, its id and, for a FAIL or an INCONCLUSIVE, its reason, or "as
// above" when the previous line had the same verdict and reason (a
// provider that is unreachable or does not speak the dialect leaves every
// requirement INCONCLUSIVE for that one reason, shown once).
func (p *Progress) Requirement(r RequirementResult) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	n := strconv.Itoa(p.done)
	if p.total > 0 {
		n += "/" + strconv.Itoa(p.total)
	}
	line := fmt.Sprintf("idemcheck: [%s] %s %s", n, r.Verdict, r.ID)
	last := p.last
	p.last = ""
	if r.Verdict != Pass && r.Reason != "" {
		reason := visible(firstLine(r.Reason))
		p.last = string(r.Verdict) + " " + reason
		if p.last == last {
			reason = "as above" // one cause for all (an unreachable provider): printed once
		}
		line += ": " + reason
	}
	_, err := io.WriteString(p.w, line+"\n")
	return err
}

// visible is s with every control character (C0, DEL, C1: a provider's
// ANSI escapes in a charge id it chose) written as Go escapes it
// ("\x1b", "\u009b"), so that a progress line cannot move the terminal's
// cursor or print over another.
func visible(s string) string {
	var b strings.Builder
	for _, c := range s {
		if !unicode.IsControl(c) {
			b.WriteRune(c)
			continue
		}
		q := strconv.QuoteRune(c)
		b.WriteString(q[1 : len(q)-1])
	}
	return b.String()
}

// Sequence counts one finished sequence and prints the running count when
// it reaches a multiple of the Progress's interval.
func (p *Progress) Sequence() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seqs++
	if p.seqs%p.every != 0 {
		return nil
	}
	line := fmt.Sprintf("idemcheck: %d sequences run", p.seqs)
	if p.left != nil {
		line += "; " + p.left()
	}
	_, err := io.WriteString(p.w, line+"\n")
	return err
}

// Shrink counts one check rapid ran while shrinking a violation of
// invariant, whose current failing sequence has steps shopper steps, and
// prints, in the count lines' style, "idemcheck: shrinking
// replay-consistent: now 3 shopper steps, 20 shrink checks; 1840 requests
// spent" (spent: what the run has used, "" for nothing) when another
// invariant is being shrunk or the length is below the shortest printed
// for it, and at least an interval's worth of checks passed since the
// last such line; otherwise, so that a long shrink is never silent, after
// ten intervals' worth, then twice as many checks as before each time
// nothing changed. The lines grow with the sequence's length and the
// logarithm of the shrink checks, never a line per check nor one per
// hundred: a shrink's candidates go up and down in length, and a real-time
// shrink runs as many checks as its time allows.
func (p *Progress) Shrink(invariant string, steps int, spent string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.shrinks++
	since := p.shrinks - p.shrunkAt
	if since < p.every {
		return nil
	}
	changed := invariant != p.shrunkInv || steps < p.shrunkMin
	if !changed && since < p.beat {
		return nil
	}
	if changed {
		p.shrunkInv, p.shrunkMin, p.beat = invariant, steps, 10*p.every
	} else {
		p.beat *= 2
	}
	p.shrunkAt = p.shrinks
	line := fmt.Sprintf("idemcheck: shrinking %s: now %s, %s", visible(invariant), plural(steps, "shopper step"), plural(p.shrinks, "shrink check"))
	if spent != "" {
		line += "; " + spent
	}
	_, err := io.WriteString(p.w, line+"\n")
	return err
}

// ShrinkEnded prints, whatever Shrink last printed, that the run ended the
// shrink of invariant's deviation at steps shopper steps, and why:
// "idemcheck: shrinking replay-consistent: now 4 shopper steps, ended:
// known (…): not shrunk again".
func (p *Progress) ShrinkEnded(invariant string, steps int, why string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, err := fmt.Fprintf(p.w, "idemcheck: shrinking %s: now %s, ended: %s\n", visible(invariant), plural(steps, "shopper step"), visible(why))
	return err
}

// Explained prints, once the failures are grouped into causes, which
// requirements printed FAIL above now read NOT JUDGED because of a cause
// (ids), so that stderr and the page agree: "idemcheck: FAIL above, NOT
// JUDGED because of replay-charges-again (their judgement needs a replay):
// replay-marked, retention-window-honoured". Nothing when ids is empty.
func (p *Progress) Explained(cause string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	_, err := fmt.Fprintf(p.w, "idemcheck: FAIL above, NOT JUDGED because of %s (their judgement needs a replay): %s\n", visible(cause), visible(strings.Join(ids, ", ")))
	return err
}

// Done prints the final count: "idemcheck: done, 3 requirements, 57
// sequences".
func (p *Progress) Done() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, err := fmt.Fprintf(p.w, "idemcheck: done, %s, %s\n", plural(p.done, "requirement"), plural(p.seqs, "sequence"))
	return err
}
