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
