package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/idemcheck/idemcheck/models"
	"pgregory.net/rapid"
)

// probe sends, outside the client, one POST that reuses the key of a
// settled intent (Succeeded or Declined): either the very same request —
// the provider must replay the first response (seed article 004: "aynı key
// ile 3 kere art arda istek at") — or the same key with another amount,
// which it must refuse with 422 (draft §2.6). Open intents are left alone:
// a probe must not settle what the client is still deciding.
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
	other := rapid.Bool().Draw(t, "other body")
	card := m.w.cardOf(a)
	m.step("probe-stored-key", fmt.Sprintf("order %d %s, %s", a.OrderID, card, map[bool]string{false: "same body", true: "another amount"}[other]))
	body := models.ChargeRequest{
		Amount: a.Amount, Currency: a.Currency, Source: cards[card],
		Description: fmt.Sprintf("Bookstore order %d", a.OrderID), MerchantReference: a.Reference(),
	}
	if other {
		body.Amount++
	}
	m.w.send("probe", a.OrderID, card, a.IdempotencyKey, body)
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

// send posts body once under key through the fault layer, without retries,
// and records it as a probe operation.
func (w *world) send(actor string, order int64, card, key string, body models.ChargeRequest) {
	id := w.hist.BeginOp(models.Operation{Actor: actor, Kind: models.OpProbe, OrderID: order, Card: card,
		Amount: body.Amount, Currency: body.Currency, InvokedAt: w.clock.Now()})
	raw, _ := json.Marshal(body) // a ChargeRequest always marshals
	ctx := models.WithOp(contextBackground(), id)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, w.ccfg.BaseURL+"/v1/charges", bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(models.IdempotencyKeyHeader, models.FormatKey(key))
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
