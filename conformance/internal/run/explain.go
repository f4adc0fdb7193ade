package run

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
)

// plainWords says, per invariant, what its violation means for the shopper
// or the books; %s is the violation's particulars (the message without the
// invariant's name).
var plainWords = map[string]string{
	check.KeyFormat:                "the client sent a charge the provider cannot deduplicate (%s), so a retry of it can charge again",
	check.OneKeyPerIntent:          "the client did not keep one Idempotency-Key per payment (%s), so the provider cannot tell a retry from a new payment",
	check.NoUnsafeRetry:            "the client resent a request it must never retry (%s), which repeats a refused or unprotected charge",
	check.ConflictNeverFinal:       "the client took an unknown outcome for a final one (%s), so the shopper was told something the provider had not decided",
	check.ReplayConsistent:         "the provider did not answer a retry with its first response (%s), so a shopper whose response was lost can be charged again or told another outcome",
	check.MismatchRejected:         "the provider accepted a reused key with another body (%s) instead of refusing it, so a client bug goes unnoticed",
	check.AtMostOneChargePerOrder:  "the provider holds more than one charge for one order (%s): the shopper paid more than once",
	check.BooksBalance:             "the client's books and the provider's charges disagree (%s)",
	check.ReconciliationConverges:  "after the faults healed and reconciliation ran, the client still disagrees with the provider (%s)",
	check.EquivalentRequestsAgree:  "the provider took one request, sent in another shape under its key, for a new one (%s), so a client or proxy that adds a slash or reorders fields charges again or is refused",
	check.KeyScopedPerAccount:      "the provider let one account's key reach another account (%s): a merchant can see another's payment or be blocked by it",
	check.NoStaleKey:               "the client resent a key older than the provider's retention window (%s), which the provider may have forgotten, so the retry can charge again",
	check.KeyScopedPerEndpoint:     "the provider let a key of one endpoint reach another (%s), so a refund can be blocked, or answered with a charge",
	check.AtMostOneRefundPerIntent: "the merchant's refund was made more than once, or made while the client recorded it as not made (%s): money went back twice or the books miss a refund",
}

// explain is the one-sentence, plain-words explanation of f at the top of
// its report: what the violation means, with its particulars, and when the
// provider holds more than one successful charge for an order, that fact
// ("the provider holds two successful charges for order 3").
func explain(f reports.Failure) string {
	particulars := strings.TrimPrefix(f.Message, f.Invariant+": ")
	if i := strings.IndexByte(particulars, '\n'); i >= 0 {
		particulars = particulars[:i]
	}
	order, n := mostCharged(f)
	if f.Invariant == check.AtMostOneChargePerOrder && n > 1 {
		return fmt.Sprintf("The provider holds %s successful charges for order %d: the shopper paid more than once.", count(n), order)
	}
	tmpl, ok := plainWords[f.Invariant]
	if !ok {
		tmpl = "invariant " + f.Invariant + " was broken (%s)"
	}
	s := fmt.Sprintf(tmpl, particulars)
	if n > 1 {
		s += fmt.Sprintf("; the provider now holds %s successful charges for order %d", count(n), order)
	}
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

// mostCharged is the order with the most successful provider charges in f
// (the lowest order id among equals) and how many it has; n is 0 when no
// charge names an order.
func mostCharged(f reports.Failure) (order int64, n int) {
	per := map[int64]int{}
	for _, c := range f.Charges {
		if o, _, ok := models.ParseReference(c.MerchantReference); ok && c.Status == "succeeded" {
			per[o]++
		}
	}
	ids := make([]int64, 0, len(per))
	for o := range per {
		ids = append(ids, o)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, o := range ids {
		if per[o] > n {
			order, n = o, per[o]
		}
	}
	return order, n
}

// count spells small numbers out: "two", …, "ten", then digits.
func count(n int) string {
	words := []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}
	if n >= 0 && n < len(words) {
		return words[n]
	}
	return strconv.Itoa(n)
}
