package reports_test

import (
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/reports"
)

// A reason that quotes a provider's answer (a charge id of its choosing)
// reaches the terminal without its control bytes: an id holding ANSI
// escapes could otherwise move the cursor and print over the FAIL line a
// forged "PASS" (the exit code stays 1, what a reader sees does not).
// Regression (outside tester): the escapes were printed as they came.
func TestProgressShowsNoControlBytes(t *testing.T) {
	var b strings.Builder
	p := reports.NewProgress(&b, 1, 0)
	id := "ch_1\x1b[1A\x1b[2K\x1b[1Gidemcheck: [1/1] PASS replay\x07\x7f\u009b"
	if err := p.Requirement(reports.RequirementResult{ID: "replay", Verdict: reports.Fail, Reason: "answered 201 " + id}); err != nil {
		t.Fatal(err)
	}
	want := `idemcheck: [1/1] FAIL replay: answered 201 ch_1\x1b[1A\x1b[2K\x1b[1Gidemcheck: [1/1] PASS replay\a\x7f\u009b` + "\n"
	if b.String() != want {
		t.Errorf("progress line\n%q\nwant\n%q", b.String(), want)
	}
}
