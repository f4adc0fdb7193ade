package models

import (
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// AttemptStatus is the life cycle of one payment intent.
type AttemptStatus string

// The payment attempt statuses of the reference client (seed article 000).
const (
	// AttemptOpen: the outcome is not known yet; the key may be resent.
	AttemptOpen AttemptStatus = "Open"
	// AttemptSucceeded: the provider holds a charge for this attempt.
	AttemptSucceeded AttemptStatus = "Succeeded"
	// AttemptDeclined: the provider answered 402; nothing was charged.
	AttemptDeclined AttemptStatus = "Declined"
	// AttemptAbandoned: reconciliation found no charge after AbandonAfter.
	AttemptAbandoned AttemptStatus = "Abandoned"
)

// PaymentAttempt is one payment intent: one order, one amount, one card.
// Every HTTP request sent for it carries the same IdempotencyKey, which is
// stored before the first send (seed article 000, "Key Ödeme Niyeti Başına
// Bir Kez Üretilir"). The card token itself is never kept, only its SHA-256.
type PaymentAttempt struct {
	ID             uuid.UUID     `json:"id"`
	OrderID        int64         `json:"order_id"`
	IdempotencyKey string        `json:"idempotency_key"`
	Amount         int64         `json:"amount"`   // minor units
	Currency       string        `json:"currency"` // ISO 4217, upper case
	CardTokenHash  string        `json:"card_token_hash"`
	CreatedAt      time.Time     `json:"created_at"`
	Status         AttemptStatus `json:"status"`
	// ProviderChargeID is the provider's charge id once Succeeded.
	ProviderChargeID string `json:"provider_charge_id,omitempty"`
	// LastSentAt is when a checkout last started sending under the key
	// (stored before the send, like the key). Reconciliation abandons an
	// attempt only once AbandonAfter has passed since then: a shopper may
	// resend an old attempt's key, and the provider may still be
	// processing that late request when reconciliation looks.
	LastSentAt time.Time `json:"last_sent_at,omitzero"`
	// LastCheckedAt is when reconciliation last asked the provider; zero if never.
	LastCheckedAt time.Time `json:"last_checked_at,omitzero"`
}

// Reference is the merchant_reference the provider sees for this attempt:
// "bookstore-<orderId>-<attemptId as 32 hex digits>". Reconciliation finds
// the attempt's charges by it.
func (a PaymentAttempt) Reference() string {
	return AttemptReference(a.OrderID, a.ID)
}

// AttemptReference builds the merchant_reference of attempt id for order.
func AttemptReference(orderID int64, id uuid.UUID) string {
	b := make([]byte, 0, len("bookstore-")+20+1+2*len(id))
	b = strconv.AppendInt(append(b, "bookstore-"...), orderID, 10)
	b = hex.AppendEncode(append(b, '-'), id[:])
	return string(b) // one string per call (was fmt.Sprintf and a hex string: 5 allocations)
}

// ParseReference splits a merchant_reference made by AttemptReference into
// its order id and attempt id (32 lower-case hex digits). ok is false for
// any other shape, including order ids AttemptReference would not print
// ("+1", "01").
func ParseReference(ref string) (orderID int64, attemptID string, ok bool) {
	rest, found := strings.CutPrefix(ref, "bookstore-")
	if !found || len(rest) < 34 || rest[len(rest)-33] != '-' {
		return 0, "", false
	}
	ord, att := rest[:len(rest)-33], rest[len(rest)-32:]
	for i := 0; i < len(att); i++ {
		if !('0' <= att[i] && att[i] <= '9' || 'a' <= att[i] && att[i] <= 'f') {
			return 0, "", false
		}
	}
	n, err := strconv.ParseInt(ord, 10, 64)
	if err != nil || strconv.FormatInt(n, 10) != ord {
		return 0, "", false
	}
	return n, att, true
}

// CardHash is the hex SHA-256 of a card token: what the client stores and
// what histories and reports show instead of the token.
func CardHash(token string) string {
	if h, ok := testCardHashes[token]; ok {
		return h
	}
	return hexSum([]byte(token))
}

// testCardHashes are the CardHash of the public test card tokens, worked
// out once: nearly every exchange of a run carries one (issue 29).
var testCardHashes = func() map[string]string {
	m := make(map[string]string, len(testCards))
	for tok := range testCards {
		m[tok] = hexSum([]byte(tok))
	}
	return m
}()

// testCards maps the public test card tokens of docs/provider-api.md to their
// labels. They are documented test values, not secrets.
var testCards = map[string]string{
	"tok_visa":           "visa",
	"tok_mastercard":     "mastercard",
	"tok_chargeDeclined": "declined",
}

// CardLabel is the label ("visa", "mastercard", "declined") of a public
// test card token, or "" for any other token: histories may carry a test
// card's label, never a token.
func CardLabel(token string) string { return testCards[token] }

// TestCardToken is the public test token of a card label ("visa" →
// "tok_visa"), or "" for a label of no test card.
func TestCardToken(label string) string {
	for tok, l := range testCards {
		if l == label {
			return tok
		}
	}
	return ""
}
