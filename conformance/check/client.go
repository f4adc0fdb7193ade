package check

import (
	"strings"

	"github.com/google/uuid"
	"github.com/idemcheck/idemcheck/models"
)

// checkOneKeyPerIntent: every POST for one intent (merchant reference)
// carries one key; no key serves two intents; the stored key is the one on
// the wire. Seed article 000, "Key Ödeme Niyeti Başına Bir Kez Üretilir".
func checkOneKeyPerIntent(w World) Finding {
	exs := clientPostsOf(w)
	if f := oneKeyOf(w, exs, map[string][]string{}, map[string]string{}, map[string]int{}, true); !f.Holds() {
		return f
	}
	return oneBodyOf(w, exs, map[string]string{})
}

// oneBodyOf is one-key-per-intent's "one key, one request" (issue 28):
// every create the client sends under a key carries the fingerprint
// (models.Fingerprint) of the key's first body, as fpOf (key → first
// fingerprint) already holds for the creates before exs. A resubmit whose
// body changed under the stored key (a timestamp in the description, a
// re-rounded amount) is the client's fault, which the provider rightly
// refuses with 422 (draft §2.5); without this clause it showed only as a
// provider verdict. A create whose body the harness cannot read (no
// fingerprint) is not judged.
func oneBodyOf(w World, exs []models.Exchange, fpOf map[string]string) Finding {
	for _, e := range exs {
		if !e.HasKey || e.Fingerprint == "" || e.IsRefund() {
			continue
		}
		first, ok := fpOf[e.Key]
		if !ok {
			fpOf[e.Key] = e.Fingerprint
			continue
		}
		if first != e.Fingerprint {
			return Violation(OneKeyPerIntent, "%s sent another body under a key it already used", newNames(w).of(e.MerchantReference))
		}
	}
	return Finding{}
}

// oneKeyOf is one-key-per-intent over the client's creates exs, after
// those keysOf (reference → distinct keys, first-seen order), refsOf (key →
// first reference) and refIndex (reference → first-seen rank) already hold:
// the first violation a whole pass would meet, given that the creates
// before exs held; the stored keys (w.Attempts) are judged when attempts.
func oneKeyOf(w World, exs []models.Exchange, keysOf map[string][]string, refsOf map[string]string, refIndex map[string]int, attempts bool) Finding {
	n := newNames(w)
	var touched []string
	for _, e := range exs {
		if !e.HasKey || e.MerchantReference == "" {
			continue
		}
		ks, seen := keysOf[e.MerchantReference]
		if !seen {
			refIndex[e.MerchantReference] = len(refIndex)
		}
		if !contains(ks, e.Key) {
			keysOf[e.MerchantReference] = append(ks, e.Key)
			touched = append(touched, e.MerchantReference)
		}
		if first, ok := refsOf[e.Key]; ok && first != e.MerchantReference {
			return Violation(OneKeyPerIntent, "%s reused the key of %s", n.of(e.MerchantReference), n.of(first))
		}
		refsOf[e.Key] = e.MerchantReference
	}
	multi := ""
	for _, ref := range touched { // the first reference, in first-seen order, with two keys
		if len(keysOf[ref]) > 1 && (multi == "" || refIndex[ref] < refIndex[multi]) {
			multi = ref
		}
	}
	if multi != "" {
		return Violation(OneKeyPerIntent, "%s sent %d distinct keys", n.of(multi), len(keysOf[multi]))
	}
	if !attempts {
		return Finding{}
	}
	for _, a := range w.Attempts {
		ks := keysOf[a.Reference()]
		if len(ks) == 1 && ks[0] != a.IdempotencyKey {
			return Violation(OneKeyPerIntent, "%s sent a key other than the one stored for it", n.of(a.Reference()))
		}
	}
	return Finding{}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// checkKeyFormat: every create the client sends carries a key, as a
// Structured Field String (quoted) of a UUID (draft-ietf-httpapi-
// idempotency-key-header §2; seed article 000); a create sent in Stripe's
// dialect (models.DialectStripe) carries one key of 1 to 255 printable
// ASCII characters, opaque and bare, as Stripe reads it
// (https://docs.stripe.com/api/idempotent_requests: "Idempotency keys are
// up to 255 characters long"; the key's form is the client's choice).
func checkKeyFormat(w World) Finding { return checkKeyFormatOf(w, clientPostsOf(w)) }

// checkKeyFormatOf is key-format over the client's creates exs.
func checkKeyFormatOf(w World, exs []models.Exchange) Finding {
	who := func(e models.Exchange) string { return newNames(w).of(e.MerchantReference) } // only for a violation
	for _, e := range exs {
		if !e.HasKey {
			return Violation(KeyFormat, "%s sent a POST without an Idempotency-Key", who(e))
		}
		if e.Dialect == models.DialectStripe {
			if why := stripeKeyFault(e); why != "" {
				return Violation(KeyFormat, "%s sent "+why, who(e))
			}
			continue
		}
		key, quoted, ok := models.ParseKey(e.KeyHeader)
		if !ok || !quoted {
			return Violation(KeyFormat, "%s sent the key unquoted or malformed, want a Structured Field String", who(e))
		}
		if _, err := uuid.Parse(key); err != nil || len(key) != 36 {
			return Violation(KeyFormat, "%s sent a key that is not a UUID", who(e))
		}
	}
	return Finding{}
}

// stripeKeyFault says what makes e's key malformed under Stripe's rules
// (the served dialect answers such a key 400: provider.Provider.Stripe),
// or "".
func stripeKeyFault(e models.Exchange) string {
	switch {
	case strings.TrimSpace(e.KeyHeader) != e.Key: // Describe joins several header lines with ", "
		return "the Idempotency-Key header twice"
	case e.Key == "":
		return "an empty Idempotency-Key"
	case len(e.Key) > models.StripeMaxKeyLength:
		return "an Idempotency-Key longer than Stripe's 255 characters"
	case strings.IndexFunc(e.Key, func(c rune) bool { return c < ' ' || c > '~' }) >= 0:
		return "an Idempotency-Key with a character outside printable ASCII"
	}
	return ""
}

// checkNoUnsafeRetry: within one client call, a POST without a key is sent
// at most once per intent, and nothing is resent after a 400 or 422 (RFC
// 9110 §9.2.2; seed article 000, ShouldRetry).
func checkNoUnsafeRetry(w World) Finding {
	n := newNames(w)
	type callIntent struct {
		op  int
		ref string
	}
	keyless := map[callIntent]int{}
	refused := map[callIntent]int{}
	for _, e := range clientPostsOf(w) {
		ci := callIntent{e.OpID, e.MerchantReference}
		if status, ok := refused[ci]; ok && e.OpID != 0 {
			return Violation(NoUnsafeRetry, "%s was resent after a %d, which is never retried", n.of(e.MerchantReference), status)
		}
		if !e.HasKey {
			keyless[ci]++
			if keyless[ci] > 1 && e.OpID != 0 {
				return Violation(NoUnsafeRetry, "%s was retried without an Idempotency-Key", n.of(e.MerchantReference))
			}
		}
		if e.Done && (e.Status == 400 || e.Status == 422) {
			refused[ci] = e.Status
		}
	}
	return Finding{}
}

// checkConflictNeverFinal: an unknown outcome (409, timeout, reset, 5xx
// other than 503) is never taken as final. A call that met an unknown
// outcome on any try, and got no 2xx or 402 after it, answers
// PaymentPending (a later 503 does not make the earlier try's charge
// impossible); Paid needs a 2xx and Declined a 402 on
// the wire; an order with an open attempt is PaymentPending, and an order
// has at most one open attempt (seed article 000: "409'u hata ya da başarı
// saymak"; docs/provider-api.md "What unknown outcome means").
func checkConflictNeverFinal(w World) Finding {
	n := newNames(w)
	byOp := map[int][]models.Exchange{}
	for _, e := range clientPostsOf(w) {
		byOp[e.OpID] = append(byOp[e.OpID], e)
	}
	for _, op := range w.History.Ops {
		if f := conflictOp(n, op, byOp[op.ID]); !f.Holds() {
			return f
		}
	}
	seen402 := map[string]bool{}
	for _, e := range clientPostsOf(w) {
		if e.Status == 402 {
			seen402[e.MerchantReference] = true
		}
	}
	return conflictState(w, n, seen402, map[int64]int{})
}

// conflictOp is 409-never-final's judgement of one operation op, given
// exs, the client's creates it sent, in order.
func conflictOp(n *names, op models.Operation, exs []models.Exchange) Finding {
	if op.Kind != models.OpCheckout || !op.Returned || op.Lost || len(exs) == 0 {
		return Finding{}
	}
	last := exs[len(exs)-1]
	ref := last.MerchantReference // named only in a violation
	unknown := firstUnknown(exs)
	switch {
	case unknown != nil && op.Result != "PaymentPending" && !anyStatus(exs, 200, 201, 402):
		return Violation(ConflictNeverFinal, "%s: checkout answered %s after the outcome was unknown (%s)", n.of(ref), op.Result, sawStatus(*unknown))
	case op.Result == "Paid" && !anyStatus(exs, 200, 201):
		return Violation(ConflictNeverFinal, "%s: checkout answered Paid without a 2xx from the provider (last %s)", n.of(ref), sawStatus(last))
	case op.Result == "Declined" && !anyStatus(exs, 402):
		return Violation(ConflictNeverFinal, "%s: checkout answered Declined without a 402 from the provider (last %s)", n.of(ref), sawStatus(last))
	}
	return Finding{}
}

// conflictState is 409-never-final over the client's state: at most one
// open attempt per order, an order with one PaymentPending, and Declined
// only after a 402 (seen402: the references the client's creates got a
// 402 for). open is scratch, emptied here.
func conflictState(w World, n *names, seen402 map[string]bool, open map[int64]int) Finding {
	clear(open)
	for _, a := range w.Attempts {
		switch a.Status {
		case models.AttemptOpen:
			open[a.OrderID]++
			if open[a.OrderID] > 1 {
				return Violation(ConflictNeverFinal, "order %d has two open intents at once", a.OrderID)
			}
		case models.AttemptDeclined:
			if !seen402[a.Reference()] {
				return Violation(ConflictNeverFinal, "%s was marked Declined without a 402 from the provider", n.of(a.Reference()))
			}
		}
	}
	if len(open) == 0 {
		return Finding{}
	}
	for _, o := range w.Orders {
		if open[o.ID] > 0 && o.Status != models.OrderPaymentPending {
			return Violation(ConflictNeverFinal, "order %d is %s while an intent is still open", o.ID, o.Status)
		}
	}
	return Finding{}
}

// firstUnknown is the first exchange of exs whose outcome was unknown, or nil.
func firstUnknown(exs []models.Exchange) *models.Exchange {
	for i := range exs {
		if exs[i].Unknown() {
			return &exs[i]
		}
	}
	return nil
}

func anyStatus(exs []models.Exchange, codes ...int) bool {
	for _, e := range exs {
		for _, c := range codes {
			if e.Status == c {
				return true
			}
		}
	}
	return false
}
