package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/idemcheck/idemcheck/models"
)

// The card tokens of docs/provider-api.md: the first two approve, the last is
// declined with 402.
const (
	tokVisa     = "tok_visa"
	tokMaster   = "tok_mastercard"
	tokDeclined = models.DeclinedCard
)

// record is what the provider remembers about one Idempotency-Key
// (draft-ietf-httpapi-idempotency-key-header §2; seed article 004): the
// request's fingerprint and, once processed, the full response.
// Its fields are guarded by Provider.mu.
type record struct {
	fingerprint string
	startedAt   time.Time // when processing was decided
	done        bool      // false while in flight
	status      int       // stored response status, once done
	body        []byte    // stored response body bytes, once done
	completedAt time.Time // start of the retention window, once done
	detached    bool      // planted bug: not in the key store while in flight (planted.go)
	loose       bool      // planted bug: processed beside the key's record, never stored (planted_headers.go)
}

// verdict is what the key store decides for an incoming request: in
// memory as over a Store, one decision (Store.Take's TakeVerdict).
type verdict = TakeVerdict

const (
	process  = TakeProcess  // new key: marked in flight, process it
	mismatch = TakeMismatch // 422: the key belongs to another request body
	inFlight = TakeInFlight // 409: the first request is still processing
	replay   = TakeReplay   // completed: answer with the stored response
)

// create handles POST /v1/charges. Validation (400) comes before the key
// store is consulted, so a bad request stores nothing. Once the key is
// marked in flight, processing runs to completion even if the client's
// context is cancelled: the client may hang up, the charge still happens.
func (p *Provider) create(w http.ResponseWriter, r *http.Request) {
	if p.keyOptional && len(r.Header.Values(models.IdempotencyKeyHeader)) == 0 {
		p.createWithoutKey(w, r)
		return
	}
	key, ok := p.requestKey(w, r)
	if !ok {
		return
	}
	if p.planted.QuotedKeyDistinct { // planted bug: QuotedKeyDistinct
		key = r.Header.Get(models.IdempotencyKeyHeader)
	}
	req, raw, err := decodeRequest(w, r)
	if err != nil {
		p.stickKey(r)                         // planted bug: KeyStuckAfterError
		if !p.holdKeyOnBodyError(w, r, key) { // planted bug: UnparsableBodyHoldsKey
			writeBodyError(w, err)
		}
		return
	}

	fingerprint := p.fingerprintOf(req, raw)
	if p.planted.NoFingerprint { // planted bug: NoFingerprint
		fingerprint = ""
	}
	if p.store != nil {
		p.serveStored(w, r, storeKey(r, chargesPath, key), fingerprint, p.chargeStored(AccountScope(r), req))
		return
	}
	key = p.memoryKey(r, key)
	if p.stuckKey(key) { // planted bug: KeyStuckAfterError
		writeInFlight(w, !p.planted.InflightNoRetryAfter)
		return
	}
	rec, v := p.take(key, fingerprint)
	p.answer(w, v, rec.stored(), func() {
		status, body := p.process(key, rec, req, r)
		if status == http.StatusInternalServerError { // planted bug: StuckInflight
			writeStuck(w)
			return
		}
		writeRaw(w, status, body)
	})
}

// answer writes what the key store's verdict v calls for, on either
// endpoint and either store: 422 for a mismatch, 409 in flight, the
// stored response replayed (writeReplay), or run's answer, which
// processes the request.
func (p *Provider) answer(w http.ResponseWriter, v verdict, stored Stored, run func()) {
	switch v {
	case mismatch:
		writeMismatch(w)
	case inFlight:
		writeInFlight(w, !p.planted.InflightNoRetryAfter) // planted bug: InflightNoRetryAfter
	case replay:
		p.writeReplay(w, stored.Status, stored.ContentType, stored.Body)
	default:
		run()
	}
}

// stored is rec's response as a replay sends it; zero for a nil rec (the
// verdicts that replay nothing).
func (rec *record) stored() Stored {
	if rec == nil {
		return Stored{}
	}
	return Stored{Status: rec.status, ContentType: mediaTypeOf(rec.status), Body: rec.body}
}

// createWithoutKey processes a POST that carries no key, for a provider
// whose profile makes the key optional: nothing is stored or deduplicated,
// so every such request that reaches the provider may charge.
func (p *Provider) createWithoutKey(w http.ResponseWriter, r *http.Request) {
	req, _, err := decodeRequest(w, r)
	if err != nil {
		writeBodyError(w, err)
		return
	}
	if p.store != nil {
		p.processStored(w, r, Taken{}, p.chargeStored(AccountScope(r), req))
		return
	}
	status, body := p.process("", &record{startedAt: p.now()}, req, r)
	writeRaw(w, status, body)
}

// take consults the key store under the lock: takeIn over p.keys, after
// the planted bugs that may change the verdict (plantedTake) have seen
// the key's live record.
func (p *Provider) take(key, fingerprint string) (*record, verdict) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if prec, pv, ok := p.plantedTake(fingerprint, live(p.keys, key, now, p.retention), now); ok { // planted bugs (planted.go)
		return prec, pv
	}
	return takeIn(p.keys, key, fingerprint, now, p.retention)
}

// process runs the request marked in flight by take: BeforeCommit (outside
// the lock), then, under the lock, the charge or decline, stored in rec.
// If BeforeCommit panics the key is released, as if never sent.
func (p *Provider) process(key string, rec *record, req models.ChargeRequest, r *http.Request) (int, []byte) {
	committed := false
	defer func() {
		if !committed {
			p.mu.Lock()
			if p.keys[key] == rec {
				delete(p.keys, key)
			}
			p.mu.Unlock()
		}
	}()
	p.slowDown(req.Source)
	if p.beforeCommit != nil {
		p.beforeCommit(r)
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if p.stuck(rec, now) { // planted bug: StuckInflight
		committed = true // the key stays in flight forever
		return http.StatusInternalServerError, nil
	}
	var status int
	var body []byte
	if req.Source == tokDeclined {
		// Each processed decline gets its own id, as a real decline names
		// its failed charge: a decline that is run again instead of replayed
		// shows as a different body.
		p.declines++
		status, body = http.StatusPaymentRequired, mustJSON(p.decline(p.declines))
	} else {
		ch := models.Charge{
			ID:                ChargeID(int64(len(p.charges) + 1)),
			Amount:            req.Amount,
			Currency:          req.Currency,
			Status:            "succeeded",
			MerchantReference: req.MerchantReference,
			Created:           now,
		}
		p.charges = append(p.charges, ch)
		p.accounts = append(p.accounts, AccountScope(r))
		status, body = http.StatusCreated, mustJSON(ch)
	}
	rec.done, rec.status, rec.body, rec.completedAt = true, status, body, now
	p.plantedCommit(key, rec)    // planted bugs (planted.go)
	p.plantedHangUp(key, rec, r) // planted bug: FreeKeyOnHangUp
	committed = true
	return status, body
}

// decodeRequest reads one JSON models.ChargeRequest (at most MaxBodyBytes:
// a longer body's error wraps *http.MaxBytesError;
// Content-Type is not checked) and validates it; raw is the body's bytes.
// The error text is the problem detail of the 400 answer.
func decodeRequest(w http.ResponseWriter, r *http.Request) (req models.ChargeRequest, raw []byte, err error) {
	if r.Body == nil {
		return req, nil, errors.New("the request body is required")
	}
	raw, err = io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		return req, nil, fmt.Errorf("the request body is not a charge request: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&req); err != nil {
		return req, raw, fmt.Errorf("the request body is not a charge request: %v", err)
	}
	if dec.Decode(&struct{}{}) != io.EOF {
		return req, raw, errors.New("the request body has data after the JSON object")
	}
	return req, raw, validate(req)
}

// validate checks a charge request: amount > 0 (minor units), currency
// three upper-case ASCII letters, a known card source, a non-empty
// merchant_reference.
func validate(req models.ChargeRequest) error {
	if req.Amount <= 0 {
		return errors.New("amount must be a positive integer in minor units")
	}
	if !isCurrency(req.Currency) {
		return errors.New("currency must be an ISO 4217 code in upper case")
	}
	switch req.Source {
	case tokVisa, tokMaster, tokDeclined, SlowCard:
	default:
		return fmt.Errorf("source must be %s, %s, %s or %s", tokVisa, tokMaster, tokDeclined, SlowCard)
	}
	if req.MerchantReference == "" {
		return errors.New("merchant_reference is required")
	}
	return nil
}

// isCurrency reports whether s is three upper-case ASCII letters.
func isCurrency(s string) bool {
	if len(s) != 3 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}
