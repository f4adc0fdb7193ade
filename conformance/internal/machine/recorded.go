package machine

import (
	"encoding/json"

	"github.com/idemcheck/idemcheck/models"
)

// recordedBody is the body the client sent first under key, as the
// history recorded it (the first create under the key, probes aside):
// what a probe copies, so that "the same body" is the client's own and a
// client under test with its own body format (another description, a
// metadata of its own) is never the cause of a provider verdict (issue
// 28). ok is false when no such create was recorded, or when its body
// cannot be rebuilt exactly (a card token that is no test card, a field
// left out: its fingerprint would differ).
func (w *World) recordedBody(key string) (body probeBody, ok bool) {
	w.recentView(func(h models.Snapshot) {
		for _, e := range h.Exchanges {
			if !e.IsPost() || e.Key != key || !e.HasKey || e.Fingerprint == "" || isProbe(h.Ops, e.OpID) {
				continue
			}
			body = probeBody{ChargeRequest: models.ChargeRequest{Amount: e.Amount, Currency: e.Currency, Source: models.TestCardToken(e.Card),
				Description: e.Description, MerchantReference: e.MerchantReference}, extra: e.Extra}
			ok = models.PayloadFingerprint(body.encode(), body.ChargeRequest) == e.Fingerprint
			return
		}
	})
	return body, ok
}

// isProbe reports whether operation id, of ops, is a probe's.
func isProbe(ops []models.Operation, id int) bool {
	for _, op := range ops {
		if op.ID == id {
			return op.Kind == models.OpProbe
		}
	}
	return false
}

// probeBody is a body a probe sends: the contract's fields, and the
// client's own members outside them as it recorded them (extra: one JSON
// object, nil for none).
type probeBody struct {
	models.ChargeRequest
	extra json.RawMessage
}

// encode is b's JSON: the ChargeRequest's, with extra's members after its
// own. A body without extra encodes as json.Marshal of its ChargeRequest,
// byte for byte.
func (b probeBody) encode() []byte {
	raw, _ := json.Marshal(b.ChargeRequest) // a plain struct; cannot fail
	if len(b.extra) <= 2 {                  // nil or {}
		return raw
	}
	out := append(raw[:len(raw)-1:len(raw)-1], ',')
	return append(out, b.extra[1:]...)
}
