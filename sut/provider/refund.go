package provider

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/idemcheck/idemcheck/models"
)

// refundBook is the refunds side of the in-memory provider: its own key
// store (a key is scoped to its endpoint: a charge's key sent to
// /v1/refunds names another key) and the refunds in creation order. Its
// fields are guarded by Provider.mu.
type refundBook struct {
	keys    map[string]*record // by parsed Idempotency-Key
	refunds []models.Refund    // ids are re_%06d of index+1
}

// refundTooLarge is the 402 body of a refund for more than what is left of
// its charge.
type refundTooLarge struct {
	Error struct {
		Type string `json:"type"`
		Code string `json:"code"`
	} `json:"error"`
}

// serveRefunds routes /v1/refunds: POST creates a refund, GET lists them by
// merchant_reference, another method gets 405 with Allow: GET, POST.
func (p *Provider) serveRefunds(w http.ResponseWriter, r *http.Request) {
	switch {
	case p.store != nil:
		writeProblem(w, http.StatusNotImplemented, "refunds are served by the in-memory reference provider only")
	case r.Method == http.MethodPost:
		p.refund(w, r)
	case r.Method == http.MethodGet:
		p.findRefunds(w, r)
	default:
		w.Header().Set("Allow", "GET, POST")
		writeProblem(w, http.StatusMethodNotAllowed, r.Method+" is not allowed on "+models.RefundsPath)
	}
}

// refund handles POST /v1/refunds (PROVIDER_API.md): 201 with the refund;
// 402 when the amount is more than what is left of the charge; 404 for an
// unknown charge; and, by its own Idempotency-Key store, the replay, 409 in
// flight and 422 for another body under the key, exactly as for charges.
// Validation (400) comes before the key store.
func (p *Provider) refund(w http.ResponseWriter, r *http.Request) {
	headers := r.Header.Values(models.IdempotencyKeyHeader)
	if len(headers) != 1 {
		writeProblem(w, http.StatusBadRequest, "exactly one Idempotency-Key header is required")
		return
	}
	key, _, ok := models.ParseKey(headers[0])
	if !ok {
		writeProblem(w, http.StatusBadRequest, "the Idempotency-Key header is not a Structured Field String or a bare token")
		return
	}
	// The refunds' store is scoped per account like the charges' (draft
	// §5), under the same scoped key, so the planted shared-store bugs
	// find the charge's record.
	key = AccountScope(r) + ":" + key
	req, err := decodeRefund(w, r)
	if err != nil {
		writeProblem(w, http.StatusBadRequest, err.Error())
		return
	}
	rec, v := p.takeRefund(key, refundFingerprint(req))
	switch v {
	case mismatch:
		writeMismatch(w)
	case inFlight:
		writeInFlight(w)
	case replay:
		w.Header().Set(models.ReplayedHeader, "true")
		writeRaw(w, rec.status, rec.body)
	default:
		status, body := p.processRefund(key, rec, req, r)
		writeRaw(w, status, body)
	}
}

// takeRefund is take for the refunds' key store, with the planted bugs of
// the refunds endpoint (plantedRefundTake).
func (p *Provider) takeRefund(key, fingerprint string) (*record, verdict) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if p.refundsPlanted() {
		if rec, v, ok := p.plantedRefundTake(key, fingerprint, now); ok {
			return rec, v
		}
	}
	return takeIn(p.refundKeys(), key, fingerprint, now, p.retention)
}

// refundKeys is the refunds' key store, made on first use. p.mu is held.
func (p *Provider) refundKeys() map[string]*record {
	if p.rf.keys == nil {
		p.rf.keys = make(map[string]*record)
	}
	return p.rf.keys
}

// takeIn is the key-store decision of take over keys (p.mu held): a record
// past the retention window is forgotten; a new key is stored in flight
// (process); a fingerprint mismatch wins over in flight.
func takeIn(keys map[string]*record, key, fingerprint string, now time.Time, retention time.Duration) (*record, verdict) {
	rec := keys[key]
	if rec != nil && rec.done && now.After(rec.completedAt.Add(retention)) {
		delete(keys, key)
		rec = nil
	}
	switch {
	case rec == nil:
		rec = &record{fingerprint: fingerprint, startedAt: now}
		keys[key] = rec
		return rec, process
	case rec.fingerprint != fingerprint:
		return nil, mismatch
	case !rec.done:
		return nil, inFlight
	}
	cp := *rec
	return &cp, replay
}

// processRefund runs a refund marked in flight: BeforeCommit (outside the
// lock), then, under it, the refund or its refusal, stored in rec (a
// detached record, planted, is stored nowhere). If BeforeCommit panics the
// key is released.
func (p *Provider) processRefund(key string, rec *record, req models.RefundRequest, r *http.Request) (int, []byte) {
	committed := false
	defer func() {
		if !committed {
			p.mu.Lock()
			if p.refundKeys()[key] == rec {
				delete(p.refundKeys(), key)
			}
			p.mu.Unlock()
		}
	}()
	if p.beforeCommit != nil {
		p.beforeCommit(r)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	status, body := p.refundLocked(req)
	rec.done, rec.status, rec.body, rec.completedAt = true, status, body, p.now()
	committed = true
	return status, body
}

// refundLocked decides a refund under p.mu: 404 for an unknown charge, 402
// for more than the charge's amount less its refunds, else a new refund.
func (p *Provider) refundLocked(req models.RefundRequest) (int, []byte) {
	var charge *models.Charge
	for i := range p.charges {
		if p.charges[i].ID == req.Charge {
			charge = &p.charges[i]
		}
	}
	if charge == nil {
		return http.StatusNotFound, mustJSON(models.Problem{Title: http.StatusText(http.StatusNotFound), Status: http.StatusNotFound, Detail: "no such charge: " + req.Charge})
	}
	left := charge.Amount
	for _, re := range p.rf.refunds {
		if re.Charge == req.Charge {
			left -= re.Amount
		}
	}
	if req.Amount > left {
		var e refundTooLarge
		e.Error.Type, e.Error.Code = "invalid_request_error", "amount_too_large"
		return http.StatusPaymentRequired, mustJSON(e)
	}
	re := models.Refund{
		ID: fmt.Sprintf("re_%06d", len(p.rf.refunds)+1), Charge: req.Charge, Amount: req.Amount,
		Status: "succeeded", MerchantReference: req.MerchantReference,
	}
	p.rf.refunds = append(p.rf.refunds, re)
	return http.StatusCreated, mustJSON(re)
}

// findRefunds handles GET /v1/refunds?merchant_reference=REF: 200 with
// {"data":[...]}, oldest first; 400 without REF.
func (p *Provider) findRefunds(w http.ResponseWriter, r *http.Request) {
	ref := r.URL.Query().Get("merchant_reference")
	if ref == "" {
		writeProblem(w, http.StatusBadRequest, "the merchant_reference query parameter is required")
		return
	}
	list := models.RefundList{Data: []models.Refund{}}
	p.mu.Lock()
	for _, re := range p.rf.refunds {
		if re.MerchantReference == ref {
			list.Data = append(list.Data, re)
		}
	}
	p.mu.Unlock()
	writeRaw(w, http.StatusOK, mustJSON(list))
}

// Refunds returns a copy of every refund the provider holds, in creation
// order: the harness's provider truth for refunds (nil over a Store, which
// serves no refunds).
func (p *Provider) Refunds() []models.Refund {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]models.Refund(nil), p.rf.refunds...)
}

// decodeRefund reads one JSON models.RefundRequest (at most maxBodyBytes)
// and validates it: a charge id, amount > 0, a merchant_reference.
func decodeRefund(w http.ResponseWriter, r *http.Request) (models.RefundRequest, error) {
	var req models.RefundRequest
	if r.Body == nil {
		return req, errors.New("the request body is required")
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err := dec.Decode(&req); err != nil {
		return req, fmt.Errorf("the request body is not a refund request: %v", err)
	}
	if dec.Decode(&struct{}{}) != io.EOF {
		return req, errors.New("the request body has data after the JSON object")
	}
	switch {
	case req.Charge == "":
		return req, errors.New("charge is required")
	case req.Amount <= 0:
		return req, errors.New("amount must be a positive integer in minor units")
	case req.MerchantReference == "":
		return req, errors.New("merchant_reference is required")
	}
	return req, nil
}

// refundFingerprint is the hex SHA-256 of a refund request's JSON, fields
// in a fixed order (draft §2.5).
func refundFingerprint(req models.RefundRequest) string {
	sum := sha256.Sum256(mustJSON(req))
	return hex.EncodeToString(sum[:])
}
