package run

import (
	"sort"
	"strconv"

	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
)

// comparisonOf is what a report puts side by side for violation v of w
// (reports.Comparison): for replay-consistent the first final answer to a
// key and body and the later answer that differs from it, for
// mismatch-rejected the final answers to two bodies under one key, for
// one-key-per-intent the key stored for the attempt and the one sent (or
// two sends of one intent under two keys); nil otherwise or when no such
// pair is in the history.
func comparisonOf(w check.World, v *check.ViolationError) *reports.Comparison {
	var done []models.Exchange
	for _, e := range check.Posts(w.History) {
		if e.HasKey && e.ProviderDone {
			done = append(done, e)
		}
	}
	sort.SliceStable(done, func(i, j int) bool { return done[i].ProviderSeq < done[j].ProviderSeq })
	final := func(e models.Exchange) bool {
		return e.ProviderStatus >= 200 && e.ProviderStatus < 300 || e.ProviderStatus == 402
	}
	for i, a := range done {
		for _, b := range done[i+1:] {
			if !final(a) || a.Key != b.Key {
				continue
			}
			switch {
			case v.Invariant == check.ReplayConsistent && a.Fingerprint == b.Fingerprint &&
				(b.ProviderStatus != a.ProviderStatus || b.ProviderBodyDigest != a.ProviderBodyDigest):
				c := reports.CompareExchanges("first answer and replay", a, b)
				c.Left, c.Right = "first answer ("+c.Left+")", "replay ("+c.Right+")"
				return &c
			case v.Invariant == check.MismatchRejected && final(b) && a.Fingerprint != b.Fingerprint:
				c := reports.CompareExchanges("one key, two bodies, both answered", a, b)
				return &c
			}
		}
	}
	if v.Invariant == check.OneKeyPerIntent {
		return keyComparison(w)
	}
	return nil
}

// keyComparison is the key stored for an attempt beside a key sent for it
// that differs, or two sends of one intent under two keys.
func keyComparison(w check.World) *reports.Comparison {
	stored := map[string]models.PaymentAttempt{}
	for _, a := range w.Attempts {
		stored[a.Reference()] = a
	}
	first := map[string]models.Exchange{}
	for _, e := range check.Posts(w.History) {
		if !e.HasKey || e.MerchantReference == "" {
			continue
		}
		if a, ok := stored[e.MerchantReference]; ok && a.IdempotencyKey != e.Key {
			return &reports.Comparison{Title: "stored key and sent key", Left: "stored for " + check.IntentName(w, a.Reference()),
				Right: "sent (exchange " + strconv.Itoa(e.ID) + ")",
				Rows:  []reports.ComparisonRow{{Field: "Idempotency-Key", Left: a.IdempotencyKey, Right: e.Key, Differs: true}}}
		}
		if f, ok := first[e.MerchantReference]; ok && f.Key != e.Key {
			c := reports.CompareExchanges("one intent, two keys", f, e)
			return &c
		}
		if _, ok := first[e.MerchantReference]; !ok {
			first[e.MerchantReference] = e
		}
	}
	return nil
}
