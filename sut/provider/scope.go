package provider

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/idemcheck/idemcheck/models"
)

// resourcePath is the resource a request path names: the path without one
// trailing slash, so that /v1/charges/ is /v1/charges. The key store keys
// by this resource, never by the raw URL: a trailing slash or an unrelated
// query parameter reaches the same resource and is the same request under
// one Idempotency-Key (draft-ietf-httpapi-idempotency-key-header §2.4, §5).
func resourcePath(path string) string {
	if len(path) > 1 {
		return strings.TrimSuffix(path, "/")
	}
	return path
}

// memoryKey is the in-memory store's key for the parsed Idempotency-Key
// key of r: its account (AccountScope of the Authorization credential,
// draft §5: the cache key is a composite of the client's key and
// client-specific attributes) and the key. Over a Store, createStored
// scopes the key itself. The planted bugs GlobalKeyScope and
// PathSensitiveKey change it (planted_shapes.go).
func (p *Provider) memoryKey(r *http.Request, key string) string {
	if p.planted.NormalisedKey { // planted bug: NormalisedKey
		key = strings.ToLower(key)[:min(len(key), 32)]
	}
	scoped := AccountScope(r) + ":" + key
	if p.planted.GlobalKeyScope { // planted bug: GlobalKeyScope
		scoped = key
	}
	if p.planted.PathSensitiveKey { // planted bug: PathSensitiveKey
		scoped += " " + r.URL.RequestURI()
	}
	return scoped
}

// fingerprintOf is the request fingerprint of a charge request's body raw,
// decoded to req: models.PayloadFingerprint, over the whole payload's content (every member and
// value, fields outside the contract such as metadata too) and not its
// bytes, so that the same members in another order or with other
// insignificant whitespace are one request (draft §2.4). The planted bug
// OrderSensitiveFingerprint fingerprints the raw bytes instead.
func (p *Provider) fingerprintOf(req models.ChargeRequest, raw []byte) string {
	if fp, ok := p.prefixFingerprint(raw); ok { // planted bug: FingerprintPrefix
		return fp
	}
	if p.planted.OrderSensitiveFingerprint { // planted bug: OrderSensitiveFingerprint
		sum := sha256.Sum256(raw)
		return hex.EncodeToString(sum[:])
	}
	return models.PayloadFingerprint(raw, req)
}

// ChargesByAccount returns a copy of the in-memory provider's charges,
// grouped by the account that created each (AccountScope of its request's
// Authorization header: "anonymous" without one), each group in creation
// order. Over a Store it is nil: ask the Store (Store.AccountCharges).
func (p *Provider) ChargesByAccount() map[string][]models.Charge {
	if p.store != nil {
		return nil
	}
	charges, scopes := p.ChargesFrom(0)
	out := map[string][]models.Charge{}
	for i, ch := range charges {
		out[scopes[i]] = append(out[scopes[i]], ch)
	}
	return out
}

// ChargesFrom returns a copy of the in-memory provider's charges from the
// i-th on (0-based, creation order), each with the account scope that
// created it (scopes[j] is charges[j]'s, as in ChargesByAccount). Charges
// are only ever appended, so a reader that keeps what it read asks only
// for what was added since (backend.Embedded, at every step). Over a
// Store both are nil.
func (p *Provider) ChargesFrom(i int) (charges []models.Charge, scopes []string) {
	if p.store != nil {
		return nil, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if i >= len(p.charges) {
		return nil, nil
	}
	return append([]models.Charge(nil), p.charges[i:]...), append([]string(nil), p.accounts[i:]...)
}
