package provider

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/idemcheck/idemcheck/models"
)

// DefaultMaxKeyLength is the longest Idempotency-Key the reference
// provider accepts when Config.MaxKeyLength is not positive: 255
// characters of the key (inside the quotes of a Structured Field String),
// as Stripe publishes for its keys (docs.stripe.com/api/idempotent_requests);
// the draft sets no maximum (docs/provider-api.md, "Key edge cases").
const DefaultMaxKeyLength = 255

// PlantedKeys are the deliberate bugs of key edge cases and of keys left
// blocked by an answer never stored (issue 25, part A), embedded in
// Planted. The zero value is the reference provider; they apply to the
// in-memory store.
type PlantedKeys struct {
	// EmptyKeyShared: an empty Idempotency-Key header is a key like any
	// other, shared by every client that sends one: a second customer's
	// other payment under it gets 422 (the reference answers 400).
	EmptyKeyShared bool
	// MalformedKeyAccepted: a header value that is neither a Structured
	// Field String nor a bare token ("unterminated, a key with characters
	// outside printable ASCII) is taken as the key, raw, and processed
	// (the reference answers 400).
	MalformedKeyAccepted bool
	// TruncatedKey: a key longer than the maximum is cut to its first
	// MaxKeyLength characters (a VARCHAR column that truncates) instead of
	// refused with 400: two keys that differ only after the cut are one.
	TruncatedKey bool
	// KeyStuckAfterError: the key is taken before the request is routed or
	// its body read; when the handler then ends without a stored answer (a
	// 404 for an unknown path, a 400 for a body that does not parse) the
	// key is left in flight for good: the same key answers 409 ever after.
	KeyStuckAfterError bool
	// FrameworkErrorsPlain: the answers the router gives before the
	// idempotency layer (404 for an unknown path, 405 for another method)
	// are Go's plain-text pages (text/plain), not problem details.
	FrameworkErrorsPlain bool
}

// requestKey is the parsed Idempotency-Key of r (models.ParseKey), the
// same for both endpoints; ok is false, and 400 answered, when r carries
// none, more than one, one that is neither a Structured Field String nor
// a bare token (draft §2.1; an empty value among them: RFC 9651 §4.2
// ignores a field that does not parse), or one longer than the maximum
// (Config.MaxKeyLength). The planted key bugs take some of those instead.
func (p *Provider) requestKey(w http.ResponseWriter, r *http.Request) (key string, ok bool) {
	headers := r.Header.Values(models.IdempotencyKeyHeader)
	switch len(headers) {
	case 0:
		writeProblem(w, http.StatusBadRequest, "the Idempotency-Key header is required")
		return "", false
	case 1:
	default:
		writeProblem(w, http.StatusBadRequest, "more than one Idempotency-Key header")
		return "", false
	}
	key, _, ok = models.ParseKey(headers[0])
	raw := strings.TrimSpace(headers[0])
	switch {
	case !ok && raw == "" && p.planted.EmptyKeyShared: // planted bug: EmptyKeyShared
		return "", true
	case !ok && raw != "" && p.planted.MalformedKeyAccepted: // planted bug: MalformedKeyAccepted
		return raw, true
	case !ok:
		writeProblem(w, http.StatusBadRequest, "the Idempotency-Key header is not a Structured Field String or a bare token")
		return "", false
	case len(key) > p.maxKeyLength && p.planted.TruncatedKey: // planted bug: TruncatedKey
		return key[:p.maxKeyLength], true
	case len(key) > p.maxKeyLength:
		writeProblem(w, http.StatusBadRequest, "the Idempotency-Key is longer than "+strconv.Itoa(p.maxKeyLength)+" characters")
		return "", false
	}
	return key, true
}

// stickKey is the KeyStuckAfterError bug: r's key, when it carries one
// that parses, is left in flight on the charges' key store for good.
func (p *Provider) stickKey(r *http.Request) {
	if !p.planted.KeyStuckAfterError {
		return
	}
	vs := r.Header.Values(models.IdempotencyKeyHeader)
	if len(vs) != 1 {
		return
	}
	key, _, ok := models.ParseKey(vs[0])
	if !ok {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stuckKeys[p.memoryKey(r, key)] = true
}

// stuckKey reports whether the KeyStuckAfterError bug left scoped key in
// flight.
func (p *Provider) stuckKey(scoped string) bool {
	if !p.planted.KeyStuckAfterError {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stuckKeys[scoped]
}

// routerError answers a request no route takes (404, or 405 with Allow):
// problem details, or under the FrameworkErrorsPlain bug the router's own
// plain-text page. A POST's key is first taken under KeyStuckAfterError.
func (p *Provider) routerError(w http.ResponseWriter, r *http.Request, status int, detail string) {
	if r.Method == http.MethodPost {
		p.stickKey(r) // planted bug: KeyStuckAfterError
	}
	if p.planted.FrameworkErrorsPlain { // planted bug: FrameworkErrorsPlain
		http.Error(w, http.StatusText(status), status)
		return
	}
	writeProblem(w, status, detail)
}
