package models

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// IdempotencyKeyHeader is the request header of draft-ietf-httpapi-idempotency-key-header (§2).
const IdempotencyKeyHeader = "Idempotency-Key"

// ReplayedHeader is the optional response header a provider MAY add to a
// replayed response (docs/provider-api.md); clients must not depend on it.
const ReplayedHeader = "Idempotent-Replayed"

// ChargeRequest is the JSON body of POST /v1/charges (docs/provider-api.md).
// Amount is in minor units of Currency (548.90 TRY is 54890).
type ChargeRequest struct {
	Amount            int64  `json:"amount"`
	Currency          string `json:"currency"`
	Source            string `json:"source"`
	Description       string `json:"description"`
	MerchantReference string `json:"merchant_reference"`
}

// Charge is a charge as the provider returns it in a 201 body and in
// GET /v1/charges?merchant_reference=. Amount is in minor units.
type Charge struct {
	ID                string    `json:"id"`
	Amount            int64     `json:"amount"`
	Currency          string    `json:"currency"`
	Status            string    `json:"status"`
	MerchantReference string    `json:"merchant_reference"`
	Created           time.Time `json:"-"`
}

// ChargeList is the body of GET /v1/charges?merchant_reference=.
type ChargeList struct {
	Data []Charge `json:"data"`
}

// ErrorBody is the body of a 402 decline: {"error":{"type":...,"code":...}}.
// DeclineID names this decline (the reference provider's "dc_000001"), so a
// replay is told from a decline that ran again.
type ErrorBody struct {
	Error struct {
		Type        string `json:"type"`
		Code        string `json:"code"`
		DeclineCode string `json:"decline_code,omitempty"`
		DeclineID   string `json:"decline_id,omitempty"`
	} `json:"error"`
}

// DeclinedCard is the card token the providers decline (docs/provider-api.md).
const DeclinedCard = "tok_chargeDeclined"

// Decline is the n-th decline a provider processed, as docs/provider-api.md
// shapes it: card_error / card_declined / insufficient_funds, with
// DeclineID "dc_%06d" of n.
func Decline(n int) ErrorBody {
	var e ErrorBody
	e.Error.Type, e.Error.Code, e.Error.DeclineCode = "card_error", "card_declined", "insufficient_funds"
	e.Error.DeclineID = fmt.Sprintf("dc_%06d", n)
	return e
}

// Problem is an RFC 9457 problem-details body, used for 400, 409, 422, 429
// and 5xx answers.
type Problem struct {
	Type   string `json:"type,omitempty"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
}

// Fingerprint is the hex SHA-256 of the canonical form of a charge request:
// its JSON with the fields in a fixed order. Two requests under one key with
// different fingerprints are a mismatch (422 in the reference dialect; draft
// §2.5 "Idempotency Fingerprint").
func Fingerprint(r ChargeRequest) string {
	b, _ := json.Marshal(r) // field order is fixed by the struct; cannot fail
	return hexSum(b)
}

// FormatKey renders key as a Structured Field String (RFC 9651 §3.3.3), the
// form draft-ietf-httpapi-idempotency-key-header §2 requires: in double
// quotes, with `"` and `\` escaped.
func FormatKey(key string) string {
	var b strings.Builder
	b.Grow(len(key) + 2)
	b.WriteByte('"')
	for i := 0; i < len(key); i++ {
		if key[i] == '"' || key[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(key[i])
	}
	b.WriteByte('"')
	return b.String()
}

// ParseKey reads an Idempotency-Key header value. A quoted value is parsed as
// a Structured Field String (quoted is true); anything else is taken as the
// bare token, trimmed of spaces, as docs/provider-api.md asks providers to accept.
// ok is false for an empty value, a malformed string, or a character outside
// printable ASCII.
func ParseKey(value string) (key string, quoted bool, ok bool) {
	v := strings.TrimSpace(value)
	if v == "" {
		return "", false, false
	}
	if v[0] != '"' {
		for i := 0; i < len(v); i++ {
			if v[i] <= ' ' || v[i] >= 0x7f || v[i] == '"' || v[i] == '\\' {
				return "", false, false
			}
		}
		return v, false, true
	}
	if inner, plain := plainQuoted(v); plain {
		return inner, true, true
	}
	var b strings.Builder
	b.Grow(len(v))
	for i := 1; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\':
			i++
			if i >= len(v) || (v[i] != '"' && v[i] != '\\') {
				return "", true, false
			}
			b.WriteByte(v[i])
		case c == '"':
			if i != len(v)-1 || b.Len() == 0 {
				return "", true, false
			}
			return b.String(), true, true
		case c < ' ' || c >= 0x7f:
			return "", true, false
		default:
			b.WriteByte(c)
		}
	}
	return "", true, false // no closing quote
}

// plainQuoted is the inside of a quoted key with no escape in it (every
// key the harness and the reference client send), as a substring of v:
// ParseKey runs on every recorded exchange, and building the key byte by
// byte cost 2.9 % of a sequence's allocations (issue 29).
func plainQuoted(v string) (string, bool) {
	if len(v) < 3 || v[len(v)-1] != '"' {
		return "", false
	}
	inner := v[1 : len(v)-1]
	for i := 0; i < len(inner); i++ {
		if c := inner[i]; c < ' ' || c >= 0x7f || c == '"' || c == '\\' {
			return "", false
		}
	}
	return inner, true
}
