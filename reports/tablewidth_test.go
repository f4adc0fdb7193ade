package reports_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
)

// tableRowsWiderThan is every Markdown table row of md (a line that
// starts with "|") wider than width characters.
func tableRowsWiderThan(md string, width int) []string {
	var wide []string
	for line := range strings.SplitSeq(md, "\n") {
		if strings.HasPrefix(line, "|") && utf8.RuneCountInString(line) > width {
			wide = append(wide, line)
		}
	}
	return wide
}

// Every table of a certification page fits a 100-column terminal (issue
// 23, item 1), whatever a provider puts in it: a lookup's long query, a
// long charge id, a long provider URL, an invariant over a long subject.
// The deciding columns stay in the row; a long particular moves to a note
// under its table, whole.
func TestCertificationTablesFitATerminal(t *testing.T) {
	c := certFixture()
	c.Provider = "https://sandbox.payments.example.com/tenants/acme-bookstore-eu-central-1/api/v1/idempotency/conformance"
	lookup := models.Exchange{ID: 9, Seq: 20, Method: "GET", Path: "/v1/charges",
		Query:  "merchant_reference=idemcheck-ab9c8a2257b9-equivalent-request-shapes-agree-17",
		SentAt: t0.Add(time.Second + 1340368*time.Nanosecond), Done: true, Status: 200, Forwarded: true, ProviderDone: true,
		ProviderStatus: 200, ChargeID: "ch_3MmlLrLkdIwHu7ix0snN0B15", ProviderChargeID: "ch_3MmlLrLkdIwHu7ix0snN0B15",
		Fault: "hold (up to 7.5s)"}
	c.Requirements[0].Evidence = append(c.Requirements[0].Evidence, lookup)
	c.Invariants = append(c.Invariants, reports.InvariantResult{Name: "equivalent-requests-agree", Verdict: reports.NotJudged,
		Evaluations: 28, Subject: "requests resent in another shape under a key that charged"})
	md := string(reports.CertificationMarkdown(c))

	assert.Empty(t, tableRowsWiderThan(md, reports.MaxTableWidth), "rows wider than a terminal")
	assert.Regexp(t, "\\| 9 \\| \\(none\\) \\| 200 \\| 200 \\| `ch_3MmlLrLkdIwHu7ix0snN0B15` \\| [^|]+ \\| GET \\[2\\] \\|", md,
		"the deciding columns stay; the request moves to a note, its method kept")
	assert.Contains(t, md, "- [2] GET /v1/charges?merchant_reference=idemcheck-ab9c8a2257b9-equivalent-request-shapes-agree-17\n")
	assert.Contains(t, md, "/tenants/acme-bookstore-eu-central-1/api/v1/idempotency/conformance`\n", "the URL whole, in a note")
	assert.Contains(t, md, "requests resent in another shape under a key that charged\n")
	assert.Contains(t, md, "| # | key | provider | client saw | charge | time | request | body | fault | replayed |\n",
		"an evidence table names its columns in the narrow form, deciding ones first")
}

// A failure report keeps every column of its exchanges table, in its
// order, whether or not the rows fill them.
func TestFailureReportKeepsItsExchangeColumns(t *testing.T) {
	md := string(reports.Markdown(fixture()))
	assert.Contains(t, md, "| # | key | provider | client saw | charge | step | time | request | body | fault | Idempotent-Replayed |\n")
}

// A deviation whose shrink ended in a sentence keeps "not minimal" in its
// row (what a reader and conformance's catalogue test read there), within
// a terminal's width, and the sentence whole under the table. Before, the
// row was 143 characters wide on replay-new-charge's page.
func TestDeviationsTableFitsATerminal(t *testing.T) {
	minimal := "not minimal: a smaller sequence failed once but did not fail again when rapid ran it a second time (timing: the run is in real time)"
	md := reports.CatalogueMarkdown([]reports.Deviation{{Invariant: "at-most-one-charge-per-order", Verdict: reports.Fail,
		Steps: 4, Minimal: minimal, Category: "c"}}, "../")
	assert.Empty(t, tableRowsWiderThan(md, reports.MaxTableWidth))
	assert.Contains(t, md, "| 1 | **FAIL** | `at-most-one-charge-per-order` | 4 | not minimal |\n")
	assert.Contains(t, md, "   shrink: "+minimal+"\n")
}
