package check_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/models"
)

// paidFixture is order 1 paid by ch_000001, with a refund intent of 20000
// in status st and the provider's refunds for it.
func paidFixture(st models.RefundStatus, refunds ...int64) *fixture {
	f := newFixture()
	f.att.Status, f.att.ProviderChargeID = models.AttemptSucceeded, "ch_000001"
	f.w.Attempts = []models.PaymentAttempt{f.att}
	f.w.Orders[0].Status, f.w.Orders[0].ProviderChargeID = models.OrderPaid, "ch_000001"
	f.w.Charges = []models.Charge{{ID: "ch_000001", Amount: 54890, Currency: "TRY", Status: "succeeded", MerchantReference: f.att.Reference()}}
	f.post(f.att.IdempotencyKey, 201, "", 201, "ch_000001")
	intent := models.RefundIntent{ID: uuid.MustParse("11a1d96c-e23d-77bf-801e-9df969c1d378"), OrderID: 1, Charge: "ch_000001",
		IdempotencyKey: "k-refund", Amount: 20000, Status: st}
	for i, amount := range refunds {
		id := "re_00000" + string(rune('1'+i))
		f.w.Refunds = append(f.w.Refunds, models.Refund{ID: id, Charge: "ch_000001", Amount: amount, Status: "succeeded", MerchantReference: intent.Reference()})
		if st == models.RefundSucceeded && i == 0 {
			intent.ProviderRefundID = id
		}
	}
	f.w.RefundIntents, f.w.RefundsJudged = []models.RefundIntent{intent}, true
	return f
}

// scopedPerEndpoint evaluates key-scoped-per-endpoint alone.
func scopedPerEndpoint(w check.World) *check.ViolationError {
	var scoped []check.Invariant
	for _, inv := range check.Safety() {
		if inv.Name == check.KeyScopedPerEndpoint {
			scoped = append(scoped, inv)
		}
	}
	return check.Evaluate(w, scoped)
}

func evaluate(w check.World) *check.ViolationError {
	return check.Evaluate(w, check.Safety())
}

func TestAtMostOneRefundPerIntent(t *testing.T) {
	assert.Nil(t, evaluate(paidFixture(models.RefundSucceeded, 20000).w))
	assert.Nil(t, evaluate(paidFixture(models.RefundOpen).w))

	v := evaluate(paidFixture(models.RefundSucceeded, 20000, 20000).w)
	require.NotNil(t, v)
	assert.Equal(t, check.AtMostOneRefundPerIntent, v.Invariant)
	assert.Equal(t, "at-most-one-refund-per-intent: the provider holds 2 refunds (re_000001, re_000002) for refund 1 of order 1", v.Message)

	v = evaluate(paidFixture(models.RefundRefused, 20000).w)
	require.NotNil(t, v)
	assert.Equal(t, check.AtMostOneRefundPerIntent, v.Invariant)

	unjudged := paidFixture(models.RefundRefused, 20000)
	unjudged.w.RefundsJudged = false
	assert.Nil(t, evaluate(unjudged.w), "without the provider's refunds nothing is judged")
}

func TestBooksBalance_NeverMoreRefundedThanCharged(t *testing.T) {
	f := paidFixture(models.RefundOpen)
	f.w.Refunds = []models.Refund{{ID: "re_000001", Charge: "ch_000001", Amount: 54891, Status: "succeeded", MerchantReference: "probe-1"}}
	v := evaluate(f.w)
	require.NotNil(t, v)
	assert.Equal(t, "books-balance: the provider refunded 54891 from ch_000001, which charged 54890", v.Message)

	f = paidFixture(models.RefundSucceeded)
	f.w.RefundIntents[0].ProviderRefundID = "re_000009"
	v = evaluate(f.w)
	require.NotNil(t, v)
	assert.Equal(t, check.BooksBalance, v.Invariant)
}

// refundProbe appends the probe's POST /v1/refunds under the charge's key,
// answered status with a body whose digest is digest.
func refundProbe(f *fixture, status int, chargeID, digest string) {
	n := len(f.w.History.Exchanges)
	f.seq += 3
	f.w.History.Exchanges = append(f.w.History.Exchanges, models.Exchange{
		ID: n + 1, Seq: f.seq, Method: "POST", Path: models.RefundsPath, HasKey: true, Key: f.att.IdempotencyKey,
		KeyHeader: models.FormatKey(f.att.IdempotencyKey), Forwarded: true, ArrivalSeq: f.seq + 1,
		ProviderDone: true, ProviderSeq: f.seq + 2, ProviderStatus: status, ProviderChargeID: chargeID, ProviderBodyDigest: digest,
		Done: true, Status: status,
	})
}

func TestKeyScopedPerEndpoint(t *testing.T) {
	f := paidFixture(models.RefundOpen)
	refundProbe(f, 402, "", models.BodyDigest([]byte(`{"error":{}}`)))
	assert.Nil(t, evaluate(f.w), "kept apart: the refund's own refusal")
	f = paidFixture(models.RefundOpen)
	refundProbe(f, 422, "", models.BodyDigest([]byte(`{"detail":"x"}`)))
	assert.Nil(t, evaluate(f.w), "refused: a final answer, the client takes another key")

	for status, want := range map[int]string{
		201: "key-scoped-per-endpoint: a refund under the key of the charge of order 1 was answered with that charge's stored response (201)",
		409: "key-scoped-per-endpoint: a refund under the key of the charge of order 1 was answered 409 though the charge had finished: the key blocks the refunds endpoint",
	} {
		f := paidFixture(models.RefundOpen)
		digest, id := models.BodyDigest([]byte(`{"detail":"x"}`)), ""
		if status == 201 {
			digest, id = f.w.History.Exchanges[0].ProviderBodyDigest, "ch_000001"
		}
		refundProbe(f, status, id, digest)
		v := evaluate(f.w)
		require.NotNil(t, v, "%d", status)
		assert.Equal(t, want, v.Message)
	}
}

// A 409 for a refund whose own earlier try under the key is still at the
// provider is that refund's answer, not a block by the charge.
func TestKeyScopedPerEndpoint_OwnRefundInFlight(t *testing.T) {
	t.Run("a 409 the charge got is no stored response", func(t *testing.T) {
		f := paidFixture(models.RefundOpen)
		conflict := models.BodyDigest([]byte(`{"status":409}`))
		f.post(f.att.IdempotencyKey, 409, "", 409, "").ProviderBodyDigest = conflict
		refundProbe(f, 409, "", conflict)
		v := scopedPerEndpoint(f.w)
		require.NotNil(t, v)
		assert.Contains(t, v.Message, "answered 409 though the charge had finished")
	})

	// A 503 the charge got with the store down is no stored response
	// either: a refund turned away by the store, with the same problem
	// body, is its own answer (regression: TestConformanceOnRedis, a
	// store-down on a charge and then on the probe of its key).
	t.Run("a 503 the charge got is no stored response", func(t *testing.T) {
		f := paidFixture(models.RefundOpen)
		down := models.BodyDigest([]byte(`{"status":503}`))
		f.post(f.att.IdempotencyKey, 503, "", 503, "").ProviderBodyDigest = down
		refundProbe(f, 503, "", down)
		assert.Nil(t, scopedPerEndpoint(f.w))
	})

	f := paidFixture(models.RefundOpen)
	refundProbe(f, 402, "", models.BodyDigest([]byte(`{"error":{}}`)))
	first := &f.w.History.Exchanges[len(f.w.History.Exchanges)-1]
	first.ProviderDone, first.ProviderSeq = false, 0
	refundProbe(f, 409, "", models.BodyDigest([]byte(`{"detail":"x"}`)))
	assert.Nil(t, evaluate(f.w))
}

// Regression (WireMock refunds, issue 10): where the wire applies a status
// fault itself (WireMock answers 503 in the provider's place, and its
// journal marks the exchange answered), a charge try and the refund probe
// under its key that both met a 503 fault carry the same status and body.
// That is the fault's answer twice, not the charge's stored response.
func TestKeyScopedPerEndpoint_FaultAnswersAreNoStoredResponse(t *testing.T) {
	f := paidFixture(models.RefundOpen)
	unavailable := models.BodyDigest([]byte(`{"title":"Service Unavailable","status":503}`))
	tried := f.post(f.att.IdempotencyKey, 503, "", 503, "")
	tried.Fault, tried.ProviderBodyDigest = "503", unavailable
	refundProbe(f, 503, "", unavailable)
	f.w.History.Exchanges[len(f.w.History.Exchanges)-1].Fault = "503"
	assert.Nil(t, scopedPerEndpoint(f.w))
}
