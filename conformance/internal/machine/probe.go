package machine

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/provider"
	"pgregory.net/rapid"
)

// probeKinds are the requests a probe sends under a settled intent's key.
// The request shapes and the second account come last (probe_shapes.go).
var probeKinds = []string{"same body", "another amount", "same body, bare key", "another card", "another currency",
	shapeTrailingSlash, shapeQuery, shapeReordered, shapeWhitespace, kindOtherAccount}

// probeWindow is how close to the end of the published retention window a
// probe may still reuse a key: later, the provider may rightly have
// forgotten it, and the probe would charge anew. A window shorter than ten
// hours (the provider on Redis publishes 20 s) keeps a tenth of itself.
const probeWindow = time.Hour

// probe sends, outside the client, one POST that reuses the key of a
// Succeeded intent, or of a Declined one where providerDraws (another
// card under a declined key must not charge: the stored 402 or 422): the
// very same request — the
// provider must replay the first response (seed article 004: "aynı key ile
// 3 kere art arda istek at") —, the same key with another amount, which it
// must refuse with 422 (draft §2.6), or the same request with the key as a
// bare token instead of a Structured Field String, which docs/provider-api.md
// asks providers to take as the same key. Open intents are left alone: a
// probe must not settle what the client is still deciding.
func (m *Machine) probe(t *rapid.T) {
	// Against a remote provider whose replay-consistent and
	// mismatch-rejected are judged from its answers (conformance/check/remote.go),
	// the probes are what gives them something to judge: the reference
	// client never reuses a key with another body, nor sends it bare.
	if m.w.real && !m.w.specJudged && !m.w.loopback && !m.remoteJudged() {
		t.Skip("probes judge the provider: WireMock answers what the harness programmed, and a remote provider whose keys may expire mid-run is judged by the certification requirements")
	}
	var settled []models.PaymentAttempt
	now := m.w.clock.Now()
	for _, a := range m.w.attempts() {
		fresh := now.Sub(a.LastSentAt) < m.w.cfg.Retention-min(probeWindow, m.w.cfg.Retention/10)
		if fresh && (a.Status == models.AttemptSucceeded || (a.Status == models.AttemptDeclined && m.providerDraws())) {
			settled = append(settled, a)
		}
	}
	if len(settled) == 0 {
		t.Skip("no paid intent to probe")
	}
	a := settled[ints(0, len(settled)-1).Draw(t, "intent_index")] // an index: rapid logs draws, and an attempt holds a card hash
	kind := rapid.SampledFrom(m.w.probeKindsFor()).Draw(t, "probe")
	card := m.w.cardOf(a)
	// The body the client recorded for the key, never one rebuilt in the
	// reference client's format (recordedBody).
	body, ok := m.w.recordedBody(a.IdempotencyKey)
	if !ok {
		t.Skip("no body the client sent under the intent's key to copy")
	}
	header := m.w.keyHeader(a.IdempotencyKey)
	if isNearKind(kind) {
		near, ok := m.w.nearKey(a.IdempotencyKey, kind)
		m.stepWith("probe-stored-key", fmt.Sprintf("order %d %s, %s", a.OrderID, card, kind), m.drawFaults(t))
		if ok { // probe_nearkey.go
			m.w.send("probe", a.OrderID, "declined", m.w.keyHeader(near), probeBody{ChargeRequest: nearIntent(body.ChargeRequest, a.OrderID, m.steps)}, "")
		}
		return
	}
	m.stepWith("probe-stored-key", fmt.Sprintf("order %d %s, %s", a.OrderID, card, kind), m.drawFaults(t))
	switch kind {
	case "another amount":
		body.Amount++
	case "same body, bare key":
		header = a.IdempotencyKey
	case "another card":
		body.Source = cards[otherCard(card)]
	case "another currency":
		body.Currency = otherCurrency(body.Currency)
	}
	if check.IsShape(kind) {
		// The control: the very request first, so that a key the provider
		// no longer holds is told apart from one it holds but misreads in
		// another shape (check/shapes.go).
		m.w.send("probe", a.OrderID, card, header, body, "same body")
	}
	m.w.send("probe", a.OrderID, card, header, body, kind)
}

// probeBodyLimit is the largest body a probe may send, in bytes: the
// provider's own limit, which it checks before the key (413): the
// profile's max_body_bytes against a URL (0, unpublished: no limit), else
// the embedded provider's provider.MaxBodyBytes. A client's body near the
// limit grows past it when a probe changes its card or spaces it out, and
// the 413 then answered is no verdict on the key.
func (w *World) probeBodyLimit() int64 {
	if w.cfg.Remote != nil {
		return w.cfg.Remote.Profile().MaxBodyBytes
	}
	return provider.MaxBodyBytes
}

func otherCard(card string) string {
	if card == "visa" {
		return "mastercard"
	}
	return "visa"
}

func otherCurrency(c string) string {
	if c == "EUR" {
		return "USD"
	}
	return "EUR"
}

// cardOf finds the card label whose token hashes to a's card hash.
func (w *World) cardOf(a models.PaymentAttempt) string {
	for _, label := range cardLabels {
		if models.CardHash(cards[label]) == a.CardTokenHash {
			return label
		}
	}
	return "visa"
}

// send posts body once with the Idempotency-Key header value keyHeader
// through the fault layer, without retries, and records it as a probe. A
// probe of a request shape or another account (probe_shapes.go) is sent in
// that shape, and its kind is the operation's Detail. In the stripe
// dialect it is sent as the client sent its own (stripeCharge).
func (w *World) send(actor string, order int64, card, keyHeader string, body probeBody, kind string) {
	plain := body.encode()
	sh, detail := shapeOf(kind, plain), ""
	if limit := w.probeBodyLimit(); limit > 0 && int64(max(len(plain), len(sh.raw))) > limit {
		return // a body the provider rightly refuses for its size (413) before its key: nothing to judge
	}
	if check.IsShape(kind) || kind == kindOtherAccount {
		detail = kind
	}
	id := w.hist.BeginOp(models.Operation{Actor: actor, Kind: models.OpProbe, OrderID: order, Card: card,
		Amount: body.Amount, Currency: body.Currency, Detail: detail, InvokedAt: w.clock.Now()})
	path, raw, ct := "/v1/charges"+sh.suffix, sh.raw, "application/json"
	switch {
	case w.stripe: // in the client's own form (stripe.go)
		path, raw = w.stripeCharge(body.ChargeRequest)
		ct = "application/x-www-form-urlencoded"
	case raw == nil:
		raw = plain
	}
	ctx := models.WithOp(context.Background(), id)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, w.ccfg.BaseURL+path, bytes.NewReader(raw))
	req.Header.Set("Content-Type", ct)
	req.Header.Set(models.IdempotencyKeyHeader, keyHeader)
	switch auth := w.probeAuthorization(); {
	case sh.auth != "":
		req.Header.Set("Authorization", sh.auth)
	case auth != "":
		req.Header.Set("Authorization", auth) // merchant A, as the client sends it (auth.go)
	}
	ctx, cancel := context.WithTimeout(ctx, w.ccfg.AttemptTimeout)
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
