package machine

import (
	"github.com/idemcheck/idemcheck/models"
)

// recordedBody is the body the client sent first under key, as the
// history recorded it (the first create under the key, probes aside):
// what a probe copies, so that "the same body" is the client's own and a
// client under test with its own body format (another description) is
// never the cause of a provider verdict (issue 28). ok is false when no
// such create was recorded, or when its body cannot be rebuilt exactly
// (a card token that is no test card: its fingerprint would differ).
func (w *World) recordedBody(key string) (body models.ChargeRequest, ok bool) {
	h := w.hist.Snapshot()
	probes := map[int]bool{}
	for _, op := range h.Ops {
		if op.Kind == models.OpProbe {
			probes[op.ID] = true
		}
	}
	for _, e := range h.Exchanges {
		if !e.IsPost() || e.Key != key || !e.HasKey || probes[e.OpID] || e.Fingerprint == "" {
			continue
		}
		body = models.ChargeRequest{Amount: e.Amount, Currency: e.Currency, Source: models.TestCardToken(e.Card),
			Description: e.Description, MerchantReference: e.MerchantReference}
		return body, models.Fingerprint(body) == e.Fingerprint
	}
	return models.ChargeRequest{}, false
}
