package reports_test

import (
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/reports"
)

// TestProgressLeft: with SetLeft each count line ends with the budgets left.
func TestProgressLeft(t *testing.T) {
	var b strings.Builder
	p := reports.NewProgress(&b, 9, 2)
	p.SetLeft(func() string { return "140 requests and 61 charges left" })
	for range 4 {
		if err := p.Sequence(); err != nil {
			t.Fatal(err)
		}
	}
	want := "idemcheck: 2 sequences run; 140 requests and 61 charges left\nidemcheck: 4 sequences run; 140 requests and 61 charges left\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

// TestProgressRepeatedReasonOnce: a requirement whose verdict and reason
// are the previous line's says "as above" instead of repeating it (an
// unreachable provider: 17 requirements INCONCLUSIVE for one reason);
// another reason is printed in full.
func TestProgressRepeatedReasonOnce(t *testing.T) {
	var b strings.Builder
	p := reports.NewProgress(&b, 4, 0)
	down := "not tested: certify: provider unreachable at http://127.0.0.1:1"
	for _, r := range []reports.RequirementResult{
		{ID: "a", Verdict: reports.Inconclusive, Reason: down},
		{ID: "b", Verdict: reports.Inconclusive, Reason: down},
		{ID: "c", Verdict: reports.Fail, Reason: down},
		{ID: "d", Verdict: reports.Fail, Reason: down},
	} {
		if err := p.Requirement(r); err != nil {
			t.Fatal(err)
		}
	}
	want := "idemcheck: [1/4] INCONCLUSIVE a: " + down + "\nidemcheck: [2/4] INCONCLUSIVE b: as above\n" +
		"idemcheck: [3/4] FAIL c: " + down + "\nidemcheck: [4/4] FAIL d: as above\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
