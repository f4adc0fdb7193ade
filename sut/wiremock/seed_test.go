package wiremock_test

// The three runs of seed article 000's tests ("Testler"), against a real
// WireMock server, with the article's numbers as the expected values.

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/client"
	"github.com/idemcheck/idemcheck/sut/wiremock"
)

// Payment_retries_reuse_one_idempotency_key: the provider answers 503 to
// every POST; 4 POSTs reach it (1 try + 3 retries), all with one key, sent
// quoted; the checkout answers 503.
func TestSeedEveryPostAnswers503(t *testing.T) {
	f := newFixture(t, wiremock.Config{}, nil)
	f.wire.Schedule(repeat(faults.Fault{Kind: faults.KindStatus503}, 20))
	res := f.checkout("tok_visa")
	if res.HTTPStatus != http.StatusServiceUnavailable {
		t.Errorf("checkout answered %d (%s), want 503", res.HTTPStatus, res.Outcome)
	}
	ps := posts(f.journal(t))
	keys := map[string]bool{}
	for _, p := range ps {
		keys[p.KeyHeader] = true
	}
	if len(ps) != 4 || len(keys) != 1 {
		t.Fatalf("WireMock's journal holds %d POSTs with %d distinct keys, want 4 with 1", len(ps), len(keys))
	}
	k := ps[0].KeyHeader
	if _, quoted, ok := models.ParseKey(k); !ok || !quoted {
		t.Errorf("key %s is not a quoted Structured Field String", k)
	}
	t.Logf("charge requests=%d, distinct keys=%d, key=%s", len(ps), len(keys), k)
}

// Checkout_with_twenty_percent_payment_failures: 100 orders, every fifth
// POST answered 503. Every order answered 200 has exactly one charge and no
// order is charged twice; a circuit breaker that opened is reported. (The
// article saw 70 × 200 and 30 × 503, its breaker opened at 10 % failures
// over 100 requests.)
func TestSeedTwentyPercentFailures(t *testing.T) {
	f := newFixture(t, wiremock.Config{}, nil)
	var schedule []faults.Fault
	for i := 0; i < 1000; i++ {
		k := faults.KindPass
		if i%5 == 4 {
			k = faults.KindStatus503
		}
		schedule = append(schedule, faults.Fault{Kind: k})
	}
	f.wire.Schedule(schedule)
	answered := map[int]int{}
	paid := map[int64]string{} // order → charge id
	breakerOpen := 0
	for i := 0; i < 100; i++ {
		res := f.checkout("tok_visa")
		answered[res.HTTPStatus]++
		if res.Outcome == client.OutcomePaid {
			paid[res.Order.ID] = res.ChargeID
		}
		if res.Err != nil && strings.Contains(res.Err.Error(), "circuit breaker open") {
			breakerOpen++
		}
	}
	charges, err := f.prov.Charges()
	if err != nil {
		t.Fatal(err)
	}
	perOrder := map[int64]int{}
	for _, c := range charges {
		order, _, ok := models.ParseReference(c.MerchantReference)
		if !ok {
			t.Fatalf("charge %s has reference %q, not the client's", c.ID, c.MerchantReference)
		}
		perOrder[order]++
	}
	for order, n := range perOrder {
		if n > 1 {
			t.Errorf("order %d was charged %d times", order, n)
		}
	}
	for order, id := range paid {
		if perOrder[order] != 1 {
			t.Errorf("order %d was answered 200 (charge %s) but the provider holds %d charges for it", order, id, perOrder[order])
		}
	}
	if len(paid)+answered[http.StatusServiceUnavailable]+answered[http.StatusAccepted] != 100 {
		t.Errorf("answers %v: want only 200, 202 and 503", answered)
	}
	ps := posts(f.journal(t))
	keys := map[string]bool{}
	for _, p := range ps {
		keys[p.KeyHeader] = true
	}
	t.Logf("responses: 200 x %d, 202 x %d, 503 x %d (circuit breaker open for %d); charge requests: %d; distinct keys: %d; charges at provider: %d",
		answered[200], answered[202], answered[503], breakerOpen, len(ps), len(keys), len(charges))
}

// Unknown_outcome_is_settled_by_reconciliation: the provider takes longer
// than the total timeout, so the checkout answers 202 PaymentPending; one
// reconciliation run later the order is Paid with the charge id.
func TestSeedUnknownOutcomeSettledByReconciliation(t *testing.T) {
	f := newFixture(t, wiremock.Config{}, func(c *client.Config) {
		c.AttemptTimeout, c.TotalTimeout = 200*time.Millisecond, 700*time.Millisecond
	})
	// The article's second run, 15 s of processing against a 10 s total
	// timeout, scaled by 1/15: 1 s against 700 ms.
	f.wire.Schedule(repeat(faults.Fault{Kind: faults.KindSlowProcessing, Delay: time.Second}, 4))
	res := f.checkout("tok_visa")
	if res.HTTPStatus != http.StatusAccepted || res.Order.Status != models.OrderPaymentPending {
		t.Fatalf("checkout answered %d with the order %s, want 202 PaymentPending", res.HTTPStatus, res.Order.Status)
	}
	f.wire.Schedule(nil)
	rep := f.reconcileLater(t)
	o, _ := f.store.Order(res.Order.ID)
	if o.Status != models.OrderPaid || o.ProviderChargeID != "ch_000001" {
		t.Fatalf("after one reconciliation run (%+v) the order is %s with charge %q, want Paid with ch_000001", rep, o.Status, o.ProviderChargeID)
	}
	t.Logf("checkout=%d, after reconciliation: %s %s, charge requests=%d", res.HTTPStatus, o.Status, o.ProviderChargeID, len(posts(f.journal(t))))
}

// The article's first run: the provider takes 5 s, the attempt timeout is
// 3 s. The first try times out, the retry a second later gets 409 (the
// first is still being processed), the next one the stored 201, replayed:
// three requests, one charge. Here processing takes 2 s, the attempt
// timeout is 500 ms and the retry delay 1 s, so each answer has 500 ms or
// more to spare on a loaded machine: the 409 comes at 1.5 s, the replay at
// 2.5 s.
func TestSeedSlowProviderTimeoutConflictReplay(t *testing.T) {
	f := newFixture(t, wiremock.Config{}, func(c *client.Config) {
		c.AttemptTimeout, c.RetryDelay, c.TotalTimeout = 500*time.Millisecond, time.Second, 5*time.Second
	})
	f.wire.Schedule([]faults.Fault{{Kind: faults.KindSlowProcessing, Delay: 2 * time.Second}})
	res := f.checkout("tok_visa")
	if res.Outcome != client.OutcomePaid {
		t.Fatalf("checkout answered %d (%s), want 200 Paid", res.HTTPStatus, res.Outcome)
	}
	var seen []string
	for _, e := range f.hist.Snapshot().Exchanges {
		s := e.Err
		if s == "" {
			s = strconv.Itoa(e.Status)
			if e.Replayed {
				s += " replayed"
			}
		}
		seen = append(seen, s)
	}
	charges, err := f.prov.Charges()
	if err != nil {
		t.Fatal(err)
	}
	// On a loaded machine a try may also time out waiting: then more 409s
	// or timeouts come between; the story stays timeout, 409, replay.
	got := strings.Join(seen, ", ")
	story := regexp.MustCompile(`^client gave up, 409(, (409|client gave up))*, 201 replayed$`)
	if !story.MatchString(got) || len(charges) != 1 {
		t.Fatalf("the client saw %q with %d charges at the provider; want a timeout, a 409, the replayed 201 (\"client gave up, 409, 201 replayed\") and 1 charge", got, len(charges))
	}
	t.Logf("the client saw %s; charges at the provider: %d", got, len(charges))
}
