package provider

import (
	"bytes"
	"context"
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
	// accounts[i] is the account (AccountScope) that made refunds[i].
	accounts []string
}

// refundTooLarge is the 402 body of a refund for more than what is left of
// its charge.
type refundTooLarge struct {
	Error struct {
		Type string `json:"type"`
		Code string `json:"code"`
	} `json:"error"`
}

// serveRefunds routes /v1/refunds, in memory and over a Store alike: POST
// creates a refund, GET lists them by merchant_reference, another method
// gets 405 with Allow: GET, POST.
func (p *Provider) serveRefunds(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		p.refund(w, r)
	case http.MethodGet:
		p.findRefunds(w, r)
	default:
		w.Header().Set("Allow", "GET, POST")
		writeProblem(w, http.StatusMethodNotAllowed, r.Method+" is not allowed on "+models.RefundsPath)
	}
}

// refund handles POST /v1/refunds (docs/provider-api.md): 201 with the refund;
// 402 when the amount is more than what is left of the charge; 404 for a
// charge the account did not make; and, by its own Idempotency-Key store,
// the replay, 409 in flight and 422 for another body under the key,
// exactly as for charges (answer). Validation (400) comes before the key
// store. Over a Store the key is the account's under "refunds/"
// (storeKey) and the ledger decides atomically, with the answer stored
// in the same step (Store.CommitRefund).
func (p *Provider) refund(w http.ResponseWriter, r *http.Request) {
	key, ok := p.requestKey(w, r)
	if !ok {
		return
	}
	req, raw, err := decodeRefund(w, r)
	if err != nil {
		writeBodyError(w, err)
		return
	}
	if p.store != nil {
		p.serveStored(w, r, storeKey(r, models.RefundsPath, key), refundFingerprint(req, raw), p.refundStored(AccountScope(r), req))
		return
	}
	// The refunds' store is scoped per account like the charges' (draft
	// §5), under the same scoped key, so the planted shared-store bugs
	// find the charge's record.
	key = AccountScope(r) + ":" + key
	rec, v := p.takeRefund(key, refundFingerprint(req, raw))
	p.answer(w, v, rec.stored(), func() {
		status, body := p.processRefund(key, rec, req, r)
		writeRaw(w, status, body)
	})
}

// refundStored is the refund of req in the Store's ledger, as account's.
func (p *Provider) refundStored(account string, req models.RefundRequest) storedRun {
	return func(ctx context.Context, t Taken) (Stored, CommitVerdict, error) {
		re := newRefund(req)
		refused := func(v RefundVerdict) Stored {
			status, body := refundAnswer(re, v)
			return Stored{Status: status, ContentType: mediaTypeOf(status), Body: body}
		}
		return p.store.CommitRefund(ctx, t, account, re, refused(RefundNoCharge), refused(RefundTooLarge))
	}
}

// newRefund is the refund req asks for, without its id.
func newRefund(req models.RefundRequest) models.Refund {
	return models.Refund{Charge: req.Charge, Amount: req.Amount, Status: "succeeded", MerchantReference: req.MerchantReference}
}

// refundAnswer is the status and body of refund re decided v: 201 with
// the refund, 404 (problem details) for no such charge, 402 for more than
// is left of it.
func refundAnswer(re models.Refund, v RefundVerdict) (int, []byte) {
	switch v {
	case RefundNoCharge:
		return http.StatusNotFound, mustJSON(models.Problem{Title: http.StatusText(http.StatusNotFound), Status: http.StatusNotFound, Detail: "no such charge: " + re.Charge})
	case RefundTooLarge:
		var e refundTooLarge
		e.Error.Type, e.Error.Code = "invalid_request_error", "amount_too_large"
		return http.StatusPaymentRequired, mustJSON(e)
	}
	return http.StatusCreated, mustJSON(re)
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

// live is keys[key] unless it is past the retention window (now >
// completedAt+retention), when it is forgotten first; p.mu is held.
func live(keys map[string]*record, key string, now time.Time, retention time.Duration) *record {
	rec := keys[key]
	if rec != nil && rec.done && now.After(rec.completedAt.Add(retention)) {
		delete(keys, key)
		return nil
	}
	return rec
}

// takeIn is the key-store decision over keys (p.mu held), for either
// endpoint: a record past the retention window is forgotten; a new key is
// stored in flight (process); a fingerprint mismatch wins over in flight;
// a replay gets a copy of the completed record.
func takeIn(keys map[string]*record, key, fingerprint string, now time.Time, retention time.Duration) (*record, verdict) {
	rec := live(keys, key, now, retention)
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
	status, body := refundAnswer(p.refundLocked(AccountScope(r), newRefund(req)))
	rec.done, rec.status, rec.body, rec.completedAt = true, status, body, p.now()
	committed = true
	return status, body
}

// refundLocked is Store.AddRefund in memory, under p.mu: RefundNoCharge
// unless account made charge re.Charge (draft §5), RefundTooLarge for
// more than the charge's amount less its refunds, else re, numbered, is
// a new refund.
func (p *Provider) refundLocked(account string, re models.Refund) (models.Refund, RefundVerdict) {
	left := int64(-1)
	for i, ch := range p.charges {
		if ch.ID == re.Charge && p.accounts[i] == account {
			left = ch.Amount
		}
	}
	if left < 0 {
		return re, RefundNoCharge
	}
	for _, o := range p.rf.refunds {
		if o.Charge == re.Charge {
			left -= o.Amount
		}
	}
	if re.Amount > left {
		return re, RefundTooLarge
	}
	re.ID = RefundID(int64(len(p.rf.refunds) + 1))
	p.rf.refunds = append(p.rf.refunds, re)
	p.rf.accounts = append(p.rf.accounts, account)
	return re, RefundMade
}

// findRefunds handles GET /v1/refunds?merchant_reference=REF: 200 with
// {"data":[...]}, the asking account's refunds (AccountScope; draft §5)
// whose merchant_reference is REF, oldest first; 400 without REF; 503
// when a Store's ledger cannot be read.
func (p *Provider) findRefunds(w http.ResponseWriter, r *http.Request) {
	ref, ok := reference(w, r)
	if !ok {
		return
	}
	mine, err := p.accountRefunds(AccountScope(r))
	if err != nil {
		storeUnavailable(w)
		return
	}
	refOf := func(re models.Refund) string { return re.MerchantReference }
	writeRaw(w, http.StatusOK, mustJSON(models.RefundList{Data: ofReference(mine, ref, refOf)}))
}

// accountRefunds is the refunds account made, in creation order.
func (p *Provider) accountRefunds(account string) ([]models.Refund, error) {
	if p.store != nil {
		return p.store.AccountRefunds(context.Background(), account)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []models.Refund
	for i, re := range p.rf.refunds {
		if p.rf.accounts[i] == account {
			out = append(out, re)
		}
	}
	return out, nil
}

// Refunds returns a copy of every refund the provider holds, in creation
// order: the harness's provider truth for refunds. Over a Store it reads
// the ledger, and is nil when that fails.
func (p *Provider) Refunds() []models.Refund {
	if p.store != nil {
		rs, _ := p.store.Refunds(context.Background())
		return rs
	}
	return p.RefundsFrom(0)
}

// RefundsFrom is Refunds from the i-th on (0-based, creation order): the
// in-memory provider only appends refunds, so a reader that keeps what it
// read asks only for what was added since (backend.Embedded). Over a
// Store it is Refunds whole.
func (p *Provider) RefundsFrom(i int) []models.Refund {
	if p.store != nil {
		rs, _ := p.store.Refunds(context.Background())
		return rs
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if i >= len(p.rf.refunds) {
		return nil
	}
	return append([]models.Refund(nil), p.rf.refunds[i:]...)
}

// decodeRefund reads one JSON models.RefundRequest (at most MaxBodyBytes)
// and validates it: a charge id, amount > 0, a merchant_reference.
func decodeRefund(w http.ResponseWriter, r *http.Request) (req models.RefundRequest, raw []byte, err error) {
	if r.Body == nil {
		return req, nil, errors.New("the request body is required")
	}
	raw, err = io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		return req, nil, fmt.Errorf("the request body is not a refund request: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&req); err != nil {
		return req, raw, fmt.Errorf("the request body is not a refund request: %w", err)
	}
	if dec.Decode(&struct{}{}) != io.EOF {
		return req, raw, errors.New("the request body has data after the JSON object")
	}
	return req, raw, validRefund(req)
}

// validRefund checks a refund request's required fields.
func validRefund(req models.RefundRequest) error {
	switch {
	case req.Charge == "":
		return errors.New("charge is required")
	case req.Amount <= 0:
		return errors.New("amount must be a positive integer in minor units")
	case req.MerchantReference == "":
		return errors.New("merchant_reference is required")
	}
	return nil
}

// refundFingerprint is the fingerprint of a refund request's body raw,
// decoded to req: over the whole payload (models.PayloadFingerprint; the
// SHA-256 of req's JSON for a body of its fields only).
func refundFingerprint(req models.RefundRequest, raw []byte) string {
	return models.PayloadFingerprint(raw, req)
}
