package provider

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"time"

	"github.com/idemcheck/idemcheck/models"
)

// PlantedEdges are the provider bugs of issue 25's body, lookup,
// in-flight hint, stray header and lock lease classes, each what a real
// idempotency layer was seen to do. The zero value plants none; like the
// other planted bugs they apply to the in-memory store only.
type PlantedEdges struct {
	// UnparsableBodyHoldsKey: the key is taken before the body is read,
	// and a body that does not parse (or is refused) is answered 500 with
	// the key left in flight for good: the same key with a good body then
	// gets 409 or 422, never a charge.
	UnparsableBodyHoldsKey bool
	// FingerprintPrefix, when positive, fingerprints only the first that
	// many bytes of the raw body (a peer middleware's size-limit
	// scenario): two bodies that differ only after it are "the same
	// request", and the second gets the first one's stored answer.
	FingerprintPrefix int
	// KeyedLookupCached: a GET /v1/charges carrying an Idempotency-Key is
	// answered from a cache of that key's first lookup, so a reconciler
	// sees {"data":[]} for a charge made since.
	KeyedLookupCached bool
	// InflightNoRetryAfter: the 409 for a request still being processed
	// carries no Retry-After.
	InflightNoRetryAfter bool
	// StrayHeaderHangs, when not empty, is a client-settable header the
	// provider reads for its own purposes: a request that carries it
	// waits, unanswered, until its client gives up.
	StrayHeaderHangs string
	// LockLease, when positive, is the in-flight lock's lease: a request
	// under a key held longer than it (by Config.Now, from when the key
	// was taken) is processed again beside the first, which charges
	// twice when processing outlasts the lease.
	LockLease time.Duration
}

// holdKeyOnBodyError is the UnparsableBodyHoldsKey bug: it takes key
// (in flight, for good) and answers 500, returning true; false when the
// bug is not planted.
func (p *Provider) holdKeyOnBodyError(w http.ResponseWriter, r *http.Request, key string) bool {
	if !p.planted.UnparsableBodyHoldsKey || p.store != nil {
		return false
	}
	key = p.memoryKey(r, key)
	p.mu.Lock()
	if now := p.now(); live(p.keys, key, now, p.retention) == nil {
		p.keys[key] = &record{fingerprint: "unparsed", startedAt: now}
	}
	p.mu.Unlock()
	writeProblem(w, http.StatusInternalServerError, "internal error")
	return true
}

// prefixFingerprint is the FingerprintPrefix bug's fingerprint of raw,
// and whether the bug applies.
func (p *Provider) prefixFingerprint(raw []byte) (string, bool) {
	n := p.planted.FingerprintPrefix
	if n <= 0 {
		return "", false
	}
	sum := sha256.Sum256(raw[:min(n, len(raw))])
	return hex.EncodeToString(sum[:]), true
}

// cachedLookup is the KeyedLookupCached bug: a keyed lookup's body is
// the first body answered under its key. Without the bug, or without a
// key, it is body.
func (p *Provider) cachedLookup(r *http.Request, body []byte) []byte {
	key := r.Header.Get(models.IdempotencyKeyHeader)
	if !p.planted.KeyedLookupCached || key == "" {
		return body
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lookups == nil {
		p.lookups = map[string][]byte{}
	}
	if cached, ok := p.lookups[key]; ok {
		return cached
	}
	p.lookups[key] = body
	return body
}

// hangOnStrayHeader is the StrayHeaderHangs bug: a request carrying the
// header waits until its client is gone, and true is returned (nothing
// answered).
func (p *Provider) hangOnStrayHeader(r *http.Request) bool {
	h := p.planted.StrayHeaderHangs
	if h == "" || r.Header.Get(h) == "" {
		return false
	}
	// The body read to its end, the server notices the client leave and
	// ends the context (net/http watches the connection only then).
	_, _ = io.Copy(io.Discard, http.MaxBytesReader(nil, r.Body, MaxBodyBytes))
	<-r.Context().Done()
	return true
}

// leaseOver is the LockLease bug's test, under p.mu: rec is the same
// request's key, in flight longer than the lease.
func (p *Provider) leaseOver(fingerprint string, rec *record, now time.Time) bool {
	return p.planted.LockLease > 0 && rec != nil && !rec.done && rec.fingerprint == fingerprint &&
		now.Sub(rec.startedAt) > p.planted.LockLease
}
