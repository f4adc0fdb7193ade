// Package reports turns a shrunk failing history, or a certification run,
// into what people read: a Markdown report with a Mermaid sequence diagram,
// JSON for tools, JUnit XML for CI test panels, a curl script that replays
// the wire exchanges, and a folder per run listed by an index.
//
// Index:
//   - report.go      — Failure, Reproducibility, Write, and the helpers the renderings share.
//   - markdown.go    — Markdown: the human report.
//   - mermaid.go     — Mermaid: the history as a sequence diagram.
//   - json.go        — JSON: the failure for machines.
//   - curl.go        — CurlScript: the wire exchanges as a bash + curl script.
//   - junit.go       — JUnit XML types and FailureJUnit; junitcheck.go validates the shape.
//   - certification.go, certmd.go — the certification verdicts and their Markdown, JSON and JUnit.
//   - index.go       — run folders, run.json, index.md; Write*Run write every artefact of a run.
//   - html.go, htmlmd.go, htmlpage.go — report.html: a run folder's pages in one self-contained HTML file.
//   - ci.go          — GITHUB_STEP_SUMMARY and Progress lines for long runs.
//   - escape.go      — escaping free text for Markdown and Mermaid.
//
// Nothing here prints a card token other than the public test cards
// (tok_visa, tok_mastercard, tok_chargeDeclined, in curl scripts), nor a
// secret: histories carry only card labels and hashes, reports cut every
// card hash to its first 8 characters, and provider URLs lose their
// credentials.
package reports

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/idemcheck/idemcheck/models"
)

// Failure is one shrunk counterexample: what broke, where, the history that
// broke it, the client's and the provider's final state, and how to replay it.
type Failure struct {
	// Test is the go test name, e.g. "TestConformance".
	Test string `json:"test"`
	// Invariant is the name of the broken invariant, e.g. "one-key-per-intent".
	Invariant string `json:"invariant"`
	// Message is the full violation message.
	Message string `json:"message"`
	// Category is the message with its particulars left out (what rapid
	// shrinks by and a baseline lists), "" when not recorded.
	Category string `json:"category,omitempty"`
	// Verdict is FAIL, or KNOWN when the run's baseline acknowledges the
	// deviation; "" when not recorded (a failure).
	Verdict Verdict `json:"verdict,omitempty"`
	// Explanation is one sentence in plain words on what went wrong for
	// the shopper or the books ("the provider holds two successful charges
	// for order 3"), "" when none was made.
	Explanation string `json:"explanation,omitempty"`
	// Provider is "embedded", "wiremock", or the remote provider's URL.
	Provider string `json:"provider"`
	// Mutant is the mutant under test, "" for none; MutantSide is
	// "client" or "provider", the system it breaks.
	Mutant     string `json:"mutant"`
	MutantSide string `json:"mutant_side,omitempty"`
	// Seed is the rapid seed of the check that first failed (what
	// -rapid.seed=N replays the search from), 0 when unknown.
	Seed uint64 `json:"seed,omitempty"`
	// Schedule is the drawn fault schedule: entry n is what happened to the
	// n-th request, e.g. "503", "pass", "slow-processing 12s".
	Schedule []string        `json:"schedule"`
	History  models.Snapshot `json:"history"`
	// Orders and Attempts are the client's final state.
	Orders   []models.Order          `json:"orders"`
	Attempts []models.PaymentAttempt `json:"attempts"`
	// Charges are the provider's truth.
	Charges []models.Charge `json:"charges"`
	// Compare puts what the violation is about side by side (the first
	// answer and the replay, the stored and the sent key), nil when
	// nothing is compared.
	Compare *Comparison `json:"compare,omitempty"`
	// Replay is the exact command that replays the failure.
	Replay string `json:"replay"`
	// Notes are caveats a reader must know before trusting the report
	// (a budget that ran out while shrinking), one sentence each.
	Notes []string `json:"notes,omitempty"`
	// Reproducibility is how often the failure came back when replayed,
	// nil when it was not checked.
	Reproducibility *Reproducibility `json:"reproducibility,omitempty"`
}

// Reproducibility is the outcome of replaying a shrunk failure Runs times:
// Reproduced of them failed again on the same invariant.
type Reproducibility struct {
	Runs       int `json:"runs"`
	Reproduced int `json:"reproduced"`
}

// Flaky reports whether some replays did not fail again: the failure
// depends on something outside the seed (timing, a real network).
func (r Reproducibility) Flaky() bool { return r.Reproduced < r.Runs }

// String is "reproduced 10/10", or "flaky (k/10)" when a replay passed.
func (r Reproducibility) String() string {
	if r.Flaky() {
		return fmt.Sprintf("flaky (%d/%d)", r.Reproduced, r.Runs)
	}
	return fmt.Sprintf("reproduced %d/%d", r.Reproduced, r.Runs)
}

// Write writes the Markdown report to <dir>/<name>.md and the JSON one to
// <dir>/<name>.json, creating dir if needed, and returns both paths. name
// must be a plain file name (no path separator).
func Write(dir, name string, f Failure) (mdPath, jsonPath string, err error) {
	if name == "" || name == "." || name == ".." || filepath.Base(name) != name || strings.ContainsAny(name, `/\`) {
		return "", "", fmt.Errorf("reports: invalid report name %q", name)
	}
	js, err := JSON(f)
	if err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", fmt.Errorf("reports: %w", err)
	}
	mdPath = filepath.Join(dir, name+".md")
	jsonPath = filepath.Join(dir, name+".json")
	err = errors.Join(
		writeFile(mdPath, Markdown(f), 0o644),
		writeFile(jsonPath, js, 0o644),
	)
	if err != nil {
		return "", "", fmt.Errorf("reports: %w", err)
	}
	return mdPath, jsonPath, nil
}

// cut returns the first n characters of s followed by "…", or s if it is
// not longer than n.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// keyShort shortens a key to its first 8 and last 4 characters
// ("01a1b2c3…d378"): UUIDv7 keys made close together share their leading
// (time) digits, so the tail is what tells them apart.
func keyShort(k string) string {
	r := []rune(k)
	if len(r) <= 13 {
		return k
	}
	return string(r[:8]) + "…" + string(r[len(r)-4:])
}

// shortKey is the Idempotency-Key header of ex as sent, shortened by
// keyShort inside the quotes (`"01a1b2c3…d378"`); an unquoted header is
// shown unquoted, and a request without one as "(none)".
func shortKey(ex models.Exchange) string {
	if !ex.HasKey {
		return "(none)"
	}
	v := ex.KeyHeader
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		return `"` + keyShort(v[1:len(v)-1]) + `"`
	}
	return keyShort(v)
}

// request is the method, path and query of ex; the query is cut to 48
// characters when short is true.
func request(ex models.Exchange, short bool) string {
	s := ex.Method + " " + ex.Path
	if ex.Query != "" {
		q := ex.Query
		if short {
			q = cut(q, 48)
		}
		s += "?" + q
	}
	return s
}

// opLabel describes what operation op asked for: "checkout order 1 (visa)".
func opLabel(op models.Operation) string {
	var b strings.Builder
	b.WriteString(string(op.Kind))
	if op.OrderID != 0 {
		fmt.Fprintf(&b, " order %d", op.OrderID)
	}
	if op.Card != "" {
		fmt.Fprintf(&b, " (%s)", op.Card)
	}
	if op.Kind == models.OpOpenOrder && op.Amount != 0 {
		fmt.Fprintf(&b, " %d %s", op.Amount, op.Currency)
	}
	return b.String()
}

// opOutcome is what became of op: "PaymentPending 202", "lost in crash" or
// "did not return".
func opOutcome(op models.Operation) string {
	switch {
	case op.Lost:
		return "lost in crash"
	case !op.Returned:
		return "did not return"
	}
	s := op.Result
	if s == "" {
		s = "returned"
	}
	if op.HTTPStatus != 0 {
		s += " " + strconv.Itoa(op.HTTPStatus)
	}
	return s
}

// byStep groups ops by their step number, keeping their order.
func byStep(ops []models.Operation) map[int][]models.Operation {
	m := make(map[int][]models.Operation)
	for _, op := range ops {
		m[op.Step] = append(m[op.Step], op)
	}
	return m
}

// orphanSteps lists, sorted, the step numbers of operations that match no
// recorded step: operations from before the first step (step 0), or from a
// history that lost its steps.
func orphanSteps(h models.Snapshot) []int {
	known := make(map[int]bool, len(h.Steps))
	for _, s := range h.Steps {
		known[s.N] = true
	}
	var out []int
	seen := make(map[int]bool)
	for _, op := range h.Ops {
		if !known[op.Step] && !seen[op.Step] {
			seen[op.Step] = true
			out = append(out, op.Step)
		}
	}
	sort.Ints(out)
	return out
}

// sortedExchanges returns a copy of the exchanges of h in event order.
func sortedExchanges(h models.Snapshot) []models.Exchange {
	exs := append([]models.Exchange(nil), h.Exchanges...)
	sort.SliceStable(exs, func(i, j int) bool {
		if exs[i].Seq != exs[j].Seq {
			return exs[i].Seq < exs[j].Seq
		}
		return exs[i].ID < exs[j].ID
	})
	return exs
}

// opIndex maps operation ids to operations.
func opIndex(h models.Snapshot) map[int]models.Operation {
	m := make(map[int]models.Operation, len(h.Ops))
	for _, op := range h.Ops {
		m[op.ID] = op
	}
	return m
}
