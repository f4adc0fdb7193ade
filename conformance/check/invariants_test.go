package check_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// fixture is a hand-built history: order 1 (54890 TRY) with one attempt.
type fixture struct {
	w   check.World
	att models.PaymentAttempt
	seq int
}

func newFixture() *fixture {
	id := uuid.MustParse("01a1d96c-e23d-77bf-801e-9df969c1d378")
	att := models.PaymentAttempt{
		ID: id, OrderID: 1, IdempotencyKey: "01a1d96c-e23d-77bf-801e-9df969c1d379",
		Amount: 54890, Currency: "TRY", CardTokenHash: models.CardHash("tok_visa"), CreatedAt: t0, Status: models.AttemptOpen,
	}
	f := &fixture{att: att}
	f.w = check.World{
		Orders:    []models.Order{{ID: 1, Total: 54890, Currency: "TRY", Status: models.OrderPaymentPending}},
		Attempts:  []models.PaymentAttempt{att},
		Retention: 24 * time.Hour,
		Now:       t0.Add(time.Hour),
	}
	f.w.History.Ops = []models.Operation{{ID: 1, Step: 1, Kind: models.OpCheckout, OrderID: 1, Card: "visa", Returned: true}}
	return f
}

// post appends a create exchange of the fixture's attempt. status is what
// the client saw (0 with err); provider is what the provider answered (0:
// not forwarded).
func (f *fixture) post(key string, status int, err string, provider int, charge string) *models.Exchange {
	body := models.ChargeRequest{Amount: f.att.Amount, Currency: f.att.Currency, Source: "tok_visa", MerchantReference: f.att.Reference()}
	f.seq += 3
	e := models.Exchange{
		ID: len(f.w.History.Exchanges) + 1, Seq: f.seq, OpID: 1, Method: "POST", Path: "/v1/charges",
		KeyHeader: models.FormatKey(key), HasKey: true, Key: key,
		Fingerprint: models.Fingerprint(body), MerchantReference: f.att.Reference(), Amount: f.att.Amount, Currency: f.att.Currency,
		Fault: "pass", SentAt: t0, Done: true, DoneAt: t0, Status: status, Err: err, ChargeID: charge,
	}
	if provider != 0 {
		e.Forwarded, e.ArrivalSeq, e.ArrivedAt = true, f.seq+1, t0
		e.ProviderDone, e.ProviderSeq, e.ProviderDoneAt = true, f.seq+2, t0
		e.ProviderStatus, e.ProviderChargeID = provider, charge
		e.ProviderBodyDigest = models.BodyDigest([]byte(`{"id":"` + charge + `","status":` + strconv.Itoa(provider) + `}`))
	}
	f.w.History.Exchanges = append(f.w.History.Exchanges, e)
	return &f.w.History.Exchanges[len(f.w.History.Exchanges)-1]
}

func (f *fixture) result(r string) { f.w.History.Ops[0].Result = r }

func (f *fixture) charge(id string) {
	f.w.Charges = append(f.w.Charges, models.Charge{ID: id, Amount: f.att.Amount, Currency: f.att.Currency, Status: "succeeded", MerchantReference: f.att.Reference()})
}

func (f *fixture) succeed(charge string) {
	f.w.Attempts[0].Status, f.w.Attempts[0].ProviderChargeID = models.AttemptSucceeded, charge
	f.w.Orders[0].Status, f.w.Orders[0].ProviderChargeID = models.OrderPaid, charge
}

func violated(t *testing.T, w check.World) *check.ViolationError {
	t.Helper()
	v := check.Evaluate(w, append(check.Safety(), check.Liveness()...))
	return v
}

func TestHappyHistoryHoldsEveryInvariant(t *testing.T) {
	f := newFixture()
	f.post(f.att.IdempotencyKey, 0, "timeout", 201, "ch_000001")
	f.post(f.att.IdempotencyKey, 201, "", 201, "ch_000001") // the replay
	f.charge("ch_000001")
	f.succeed("ch_000001")
	f.result("Paid")
	assert.Nil(t, violated(t, f.w))
}

// TestProbesAreNotJudgedAsClientRequests: the harness's own probe with a
// bare key exercises the provider; key-format judges only the client.
func TestProbesAreNotJudgedAsClientRequests(t *testing.T) {
	f := newFixture()
	f.post(f.att.IdempotencyKey, 201, "", 201, "ch_000001")
	f.charge("ch_000001")
	f.succeed("ch_000001")
	f.result("Paid")
	f.w.History.Ops = append(f.w.History.Ops, models.Operation{ID: 2, Step: 2, Kind: models.OpProbe, OrderID: 1, Returned: true})
	e := f.post(f.att.IdempotencyKey, 201, "", 201, "ch_000001")
	e.OpID, e.KeyHeader = 2, f.att.IdempotencyKey // bare token
	assert.Nil(t, violated(t, f.w))
}

// TestNoUnsafeRetryAloneCatchesAKeylessRetry: key-format names a keyless
// POST first; checked alone, no-unsafe-retry still sees its retry.
func TestNoUnsafeRetryAloneCatchesAKeylessRetry(t *testing.T) {
	f := newFixture()
	for i := 0; i < 2; i++ {
		e := f.post(f.att.IdempotencyKey, 503, "", 0, "")
		e.HasKey, e.KeyHeader, e.Key = false, "", ""
	}
	f.result("Unavailable")
	var only []check.Invariant
	for _, inv := range check.Safety() {
		if inv.Name == check.NoUnsafeRetry {
			only = append(only, inv)
		}
	}
	v := check.Evaluate(f.w, only)
	require.NotNil(t, v)
	assert.Equal(t, "no-unsafe-retry: order 1 intent 1 was retried without an Idempotency-Key", v.Message)
	assert.Equal(t, "no-unsafe-retry: … was retried without an Idempotency-Key", v.Category)
}

func TestEachInvariantCatchesItsFault(t *testing.T) {
	cases := []struct {
		invariant string
		message   string
		build     func(f *fixture)
	}{
		{check.OneKeyPerIntent, "one-key-per-intent: order 1 intent 1 sent 2 distinct keys", func(f *fixture) {
			f.post(f.att.IdempotencyKey, 503, "", 0, "")
			f.post("01a1d96c-e23d-77bf-801e-000000000002", 503, "", 0, "")
			f.result("Unavailable")
		}},
		{check.AtMostOneChargePerOrder, "at-most-one-charge-per-order: the provider holds 2 charges for order 1 (ch_000001, ch_000002)", func(f *fixture) {
			f.post(f.att.IdempotencyKey, 201, "", 201, "ch_000001")
			f.charge("ch_000001")
			f.charge("ch_000002")
			f.succeed("ch_000001")
			f.result("Paid")
		}},
		{check.ConflictNeverFinal, "409-never-final: order 1 intent 1: checkout answered Declined after the outcome was unknown (409)", func(f *fixture) {
			f.post(f.att.IdempotencyKey, 409, "", 409, "")
			f.result("Declined")
		}},
		{check.ConflictNeverFinal, "409-never-final: order 1 intent 1: checkout answered Unavailable after the outcome was unknown (connection reset)", func(f *fixture) {
			// the lost response charged; the later 503s do not undo that
			f.post(f.att.IdempotencyKey, 0, "connection reset", 201, "ch_000001")
			f.post(f.att.IdempotencyKey, 503, "", 0, "")
			f.result("Unavailable")
		}},
		{check.ConflictNeverFinal, "409-never-final: order 1 intent 1: checkout answered Paid without a 2xx from the provider (last 503)", func(f *fixture) {
			f.post(f.att.IdempotencyKey, 503, "", 0, "")
			f.result("Paid")
		}},
		{check.ConflictNeverFinal, "409-never-final: order 1 is Placed while an intent is still open", func(f *fixture) {
			f.post(f.att.IdempotencyKey, 0, "timeout", 0, "")
			f.result("PaymentPending")
			f.w.Orders[0].Status = models.OrderPlaced
		}},
		{check.NoUnsafeRetry, "no-unsafe-retry: order 1 intent 1 was resent after a 422, which is never retried", func(f *fixture) {
			f.post(f.att.IdempotencyKey, 422, "", 0, "")
			f.post(f.att.IdempotencyKey, 422, "", 0, "")
			f.result("Failed")
		}},
		{check.KeyFormat, "key-format: order 1 intent 1 sent a POST without an Idempotency-Key", func(f *fixture) {
			for i := 0; i < 2; i++ {
				e := f.post(f.att.IdempotencyKey, 503, "", 0, "")
				e.HasKey, e.KeyHeader, e.Key = false, "", ""
			}
			f.result("Unavailable")
		}},
		{check.KeyFormat, "key-format: order 1 intent 1 sent the key unquoted or malformed, want a Structured Field String", func(f *fixture) {
			e := f.post(f.att.IdempotencyKey, 503, "", 0, "")
			e.KeyHeader = f.att.IdempotencyKey
			f.result("Unavailable")
		}},
		{check.ReplayConsistent, "replay-consistent: order 1 intent 1: a retry of a completed key was answered 201 ch_000002, not the first response (201 ch_000001)", func(f *fixture) {
			f.post(f.att.IdempotencyKey, 0, "timeout", 201, "ch_000001")
			f.post(f.att.IdempotencyKey, 201, "", 201, "ch_000002")
			f.charge("ch_000001")
			f.result("Paid")
			f.w.Attempts[0].Status, f.w.Attempts[0].ProviderChargeID = models.AttemptSucceeded, "ch_000001"
			f.w.Orders[0].Status, f.w.Orders[0].ProviderChargeID = models.OrderPaid, "ch_000001"
		}},
		{check.ReplayConsistent, "replay-consistent: order 1 intent 1: a retry while the key was in flight was answered 201 ch_000002, not 409", func(f *fixture) {
			f.post(f.att.IdempotencyKey, 0, "timeout", 201, "ch_000001")
			f.post(f.att.IdempotencyKey, 0, "timeout", 201, "ch_000002")
			// the second arrives while the first is still being processed
			exs := f.w.History.Exchanges
			exs[0].ProviderSeq, exs[1].ArrivalSeq, exs[1].ProviderSeq = 100, 50, 51
			f.result("PaymentPending")
		}},
		{check.MismatchRejected, "mismatch-rejected: order 1 intent 1: a request reusing a key with another body was answered 201 ch_000001, not 422", func(f *fixture) {
			f.post(f.att.IdempotencyKey, 201, "", 201, "ch_000001")
			e := f.post(f.att.IdempotencyKey, 201, "", 201, "ch_000001")
			e.Fingerprint = "another body"
			// A probe's request: the client's own creates under one key
			// carry one body (one-key-per-intent, the case below).
			f.w.History.Ops = append(f.w.History.Ops, models.Operation{ID: 2, Actor: "probe", Kind: models.OpProbe, OrderID: 1, Returned: true})
			e.OpID = 2
			f.charge("ch_000001")
			f.succeed("ch_000001")
			f.result("Paid")
		}},
		{check.OneKeyPerIntent, "one-key-per-intent: order 1 intent 1 sent another body under a key it already used", func(f *fixture) {
			f.post(f.att.IdempotencyKey, 0, "timeout", 0, "")
			e := f.post(f.att.IdempotencyKey, 422, "", 422, "")
			e.Fingerprint = "another body" // a resubmit with a volatile field (a timestamp) in its body
			f.result("PaymentPending")
		}},
		{check.BooksBalance, "books-balance: the provider holds ch_000001 for order 1 intent 1, which the client marked Abandoned", func(f *fixture) {
			f.post(f.att.IdempotencyKey, 0, "timeout", 201, "ch_000001")
			f.charge("ch_000001")
			f.result("PaymentPending")
			f.w.Attempts[0].Status = models.AttemptAbandoned
			f.w.Orders[0].Status = models.OrderPlaced
		}},
		{check.BooksBalance, "books-balance: order 1 intent 1 is Succeeded but the provider holds 0 charges for it", func(f *fixture) {
			f.post(f.att.IdempotencyKey, 201, "", 0, "ch_000001")
			f.succeed("ch_000001")
			f.result("Paid")
		}},
		{check.ReconciliationConverges, "reconciliation-converges: order 1 intent 1 is still Open after reconciliation", func(f *fixture) {
			f.post(f.att.IdempotencyKey, 0, "timeout", 0, "")
			f.result("PaymentPending")
		}},
	}
	for _, c := range cases {
		t.Run(c.message, func(t *testing.T) {
			f := newFixture()
			c.build(f)
			v := violated(t, f.w)
			require.NotNil(t, v, "expected %s to be violated", c.invariant)
			assert.Equal(t, c.invariant, v.Invariant)
			assert.Equal(t, c.message, v.Message)
		})
	}
}
