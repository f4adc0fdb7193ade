package provider

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/idemcheck/idemcheck/models"
)

// setLocation sets Location: /v1/charges/<id> on a 201 whose body is a
// charge (RFC 9110 §15.3.2: a 201 names the created resource); other
// answers, a refund's 201 among them, get none.
func setLocation(h http.Header, status int, body []byte) {
	if status != http.StatusCreated {
		return
	}
	var c models.Charge
	if json.Unmarshal(body, &c) == nil && strings.HasPrefix(c.ID, "ch_") {
		h.Set("Location", chargesPath+"/"+c.ID)
	}
}

// writeReplay answers a completed key with its stored response: the
// status, Content-Type and body bytes of the first answer, its Location,
// and Idempotent-Replayed: true.
func (p *Provider) writeReplay(w http.ResponseWriter, status int, contentType string, body []byte) {
	w.Header().Set(models.ReplayedHeader, "true")
	if !p.planted.ReplayDropsLocation { // planted bug: ReplayDropsLocation
		setLocation(w.Header(), status, body)
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// decline is the body of the n-th processed decline; under the
// DeclineNotStored bug it names no decline id, so every decline reads the
// same.
func (p *Provider) decline(n int) models.ErrorBody {
	d := models.Decline(n)
	if p.planted.DeclineNotStored { // planted bug: DeclineNotStored
		d.Error.DeclineID = ""
	}
	return d
}

// looseTake reports whether a planted bug processes the request beside
// the key's live record rec, unstored: DeclinedKeyRecharges for a stored
// 402 with another body, InflightMismatchCharges for a key in flight with
// another body. Called under p.mu.
func (p *Provider) looseTake(fingerprint string, rec *record) bool {
	if rec == nil || rec.fingerprint == fingerprint {
		return false
	}
	return (p.planted.DeclinedKeyRecharges && rec.done && rec.status == http.StatusPaymentRequired) ||
		(p.planted.InflightMismatchCharges && !rec.done)
}

// Declines is how many declines the provider processed (402 answers it
// computed, not replays): a side effect a replay must not have. Over a
// Store it is -1 (not counted).
func (p *Provider) Declines() int {
	if p.store != nil {
		return -1
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.declines
}

// plainErrors is the ErrorsNotProblemDetails bug: a ResponseWriter that
// sends problem details as plain application/json.
type plainErrors struct{ http.ResponseWriter }

func (e plainErrors) WriteHeader(code int) {
	if e.Header().Get("Content-Type") == models.ProblemContentType {
		e.Header().Set("Content-Type", "application/json")
	}
	e.ResponseWriter.WriteHeader(code)
}
