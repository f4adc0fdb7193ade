package reports_test

import (
	"time"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
)

// trt is a non-UTC zone, so that round trips are checked modulo time zone.
var trt = time.FixedZone("TRT", 3*60*60)

// t0 is when the fixture's first step began.
var t0 = time.Date(2025, 3, 14, 10, 0, 0, 0, trt)

const (
	fixtureKey         = "0192f0e4-5b7c-7d1e-9a2b-3c4d5e6f7a8b"
	fixtureExplanation = "the shopper's one payment for order 1 went out under 2 different Idempotency-Keys, so a retry can charge again."
	fixtureReplay      = "go test ./conformance -run '^TestConformance$' -rapid.failfile=testdata/rapid/TestConformance/TestConformance-1.fail"
)

// fixtureAttemptID is the attempt's id; uuid.UUID is a [16]byte.
var fixtureAttemptID = [16]byte{0x01, 0x92, 0xf0, 0xe4, 0x5b, 0x7c, 0x7d, 0x1e, 0x9a, 0x2b, 0x3c, 0x4d, 0x5e, 0x6f, 0x7a, 0x8c}

// cardHash is the hash of the fixture's (made-up) card token.
var cardHash = models.CardHash("tok_visa_4242")

// post is a keyed POST /v1/charges of the fixture's checkout, exchange id,
// sent at offset at with fault.
func post(id, seq int, at time.Duration, fault string) models.Exchange {
	return models.Exchange{
		ID: id, Seq: seq, OpID: 2, Method: "POST", Path: "/v1/charges",
		KeyHeader: models.FormatKey(fixtureKey), HasKey: true, Key: fixtureKey,
		Fingerprint:       "5f1d3c0b",
		MerchantReference: models.AttemptReference(1, fixtureAttemptID),
		Amount:            54890, Currency: "TRY", CardHash: cardHash, Card: "visa",
		Description: "Bookstore order 1",
		Fault:       fault, SentAt: t0.Add(at), Done: true, DoneAt: t0.Add(at),
	}
}

// fixture is a hand-made shrunk failure: 2 steps, an open-order and one
// checkout whose 3 requests meet a 503 injected before the provider, a 409
// and a replayed 201.
func fixture() reports.Failure {
	injected := post(1, 6, time.Second, "503")
	injected.Status = 503

	conflict := post(2, 8, 3*time.Second, "pass")
	conflict.Forwarded, conflict.ArrivalSeq, conflict.ArrivedAt = true, 9, t0.Add(3*time.Second)
	conflict.ProviderDone, conflict.ProviderSeq, conflict.ProviderDoneAt = true, 10, t0.Add(3*time.Second)
	conflict.ProviderStatus, conflict.ProviderBodyDigest = 409, "9c1e"
	conflict.Status = 409

	replay := post(3, 12, time.Minute+2500*time.Millisecond, "pass")
	replay.Forwarded, replay.ArrivalSeq, replay.ArrivedAt = true, 13, replay.SentAt
	replay.ProviderDone, replay.ProviderSeq, replay.ProviderDoneAt = true, 14, replay.SentAt
	replay.ProviderStatus, replay.ProviderChargeID, replay.ProviderBodyDigest = 201, "ch_000001", "7a0b"
	replay.Status, replay.Replayed, replay.ChargeID = 201, true, "ch_000001"

	ref := models.AttemptReference(1, fixtureAttemptID)
	return reports.Failure{
		Test:        "TestConformance",
		Invariant:   "one-key-per-intent",
		Message:     "one-key-per-intent: order 1 intent 1 sent 2 distinct keys",
		Explanation: fixtureExplanation,
		Seed:        7031,
		Provider:    "embedded",
		Mutant:      "fresh-key-per-retry",
		Schedule:    []string{"503", "pass", "slow-processing 12.000617s"},
		History: models.Snapshot{
			Steps: []models.Step{
				{N: 1, Action: "open-order", Args: "total=54890 TRY", At: t0},
				{N: 2, Action: "checkout", Args: "order 1 with visa", At: t0.Add(time.Second)},
			},
			Ops: []models.Operation{
				{
					ID: 1, Step: 1, Actor: "shopper", Kind: models.OpOpenOrder, OrderID: 1,
					Amount: 54890, Currency: "TRY", InvokedAt: t0, ReturnedAt: t0, Returned: true, Result: "Placed",
				},
				{
					ID: 2, Step: 2, Actor: "shopper", Kind: models.OpCheckout, OrderID: 1, Card: "visa",
					Amount: 54890, Currency: "TRY", InvokedAt: t0.Add(time.Second),
					ReturnedAt: replay.DoneAt, Returned: true, Result: "Paid", HTTPStatus: 201,
					AttemptID: "0192f0e4-5b7c-7d1e-9a2b-3c4d5e6f7a8c", ChargeID: "ch_000001",
				},
			},
			Exchanges: []models.Exchange{injected, conflict, replay},
		},
		Orders: []models.Order{{ID: 1, Total: 54890, Currency: "TRY", Status: models.OrderPaid, ProviderChargeID: "ch_000001"}},
		Attempts: []models.PaymentAttempt{{
			ID: fixtureAttemptID, OrderID: 1, IdempotencyKey: fixtureKey, Amount: 54890, Currency: "TRY",
			CardTokenHash: cardHash, CreatedAt: t0.Add(time.Second), Status: models.AttemptSucceeded,
			ProviderChargeID: "ch_000001",
		}},
		Charges:         []models.Charge{{ID: "ch_000001", Amount: 54890, Currency: "TRY", Status: "succeeded", MerchantReference: ref}},
		Replay:          fixtureReplay,
		Reproducibility: &reports.Reproducibility{Runs: 10, Reproduced: 10},
	}
}
