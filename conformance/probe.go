package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/idemcheck/idemcheck/models"
	"pgregory.net/rapid"
)

// probeKinds are the requests a probe sends under a settled intent's key.
var probeKinds = []string{"same body", "another amount", "same body, bare key"}

// probe sends, outside the client, one POST that reuses the key of a
// settled intent (Succeeded or Declined): the very same request — the
// provider must replay the first response (seed article 004: "aynı key ile
// 3 kere art arda istek at") —, the same key with another amount, which it
// must refuse with 422 (draft §2.6), or the same request with the key as a
// bare token instead of a Structured Field String, which PROVIDER_API.md
// asks providers to take as the same key. Open intents are left alone: a
// probe must not settle what the client is still deciding.
func (m *machine) probe(t *rapid.T) {
	var settled []models.PaymentAttempt
	for _, a := range m.w.store.Attempts() {
		if a.Status == models.AttemptSucceeded || a.Status == models.AttemptDeclined {
			settled = append(settled, a)
		}
	}
	if len(settled) == 0 {
		t.Skip("no settled intent to probe")
	}
	a := rapid.SampledFrom(settled).Draw(t, "intent")
	kind := rapid.SampledFrom(probeKinds).Draw(t, "probe")
	card := m.w.cardOf(a)
	m.stepWith("probe-stored-key", fmt.Sprintf("order %d %s, %s", a.OrderID, card, kind), m.drawFaults(t))
	body := models.ChargeRequest{
		Amount: a.Amount, Currency: a.Currency, Source: cards[card],
		Description: fmt.Sprintf("Bookstore order %d", a.OrderID), MerchantReference: a.Reference(),
	}
	header := models.FormatKey(a.IdempotencyKey)
	switch kind {
	case "another amount":
		body.Amount++
	case "same body, bare key":
		header = a.IdempotencyKey
	}
	m.w.send("probe", a.OrderID, card, header, body)
}

// cardOf finds the card label whose token hashes to a's card hash.
func (w *world) cardOf(a models.PaymentAttempt) string {
	for _, label := range cardLabels {
		if models.CardHash(cards[label]) == a.CardTokenHash {
			return label
		}
	}
	return "visa"
}

// send posts body once with the Idempotency-Key header value keyHeader
// through the fault layer, without retries, and records it as a probe.
func (w *world) send(actor string, order int64, card, keyHeader string, body models.ChargeRequest) {
	id := w.hist.BeginOp(models.Operation{Actor: actor, Kind: models.OpProbe, OrderID: order, Card: card,
		Amount: body.Amount, Currency: body.Currency, InvokedAt: w.clock.Now()})
	raw, _ := json.Marshal(body) // a ChargeRequest always marshals
	ctx := models.WithOp(contextBackground(), id)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, w.ccfg.BaseURL+"/v1/charges", bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(models.IdempotencyKeyHeader, keyHeader)
	ctx, cancel := contextWithTimeout(ctx, w.ccfg.AttemptTimeout)
	defer cancel()
	resp, err := w.faults.RoundTrip(req.WithContext(ctx))
	result, status := "", 0
	if err != nil {
		result = "transport error"
	} else {
		_ = resp.Body.Close()
		result, status = resp.Status, resp.StatusCode
	}
	w.hist.EndOp(id, func(op *models.Operation) {
		op.Returned, op.ReturnedAt, op.Result, op.HTTPStatus = true, w.clock.Now(), result, status
	})
}
