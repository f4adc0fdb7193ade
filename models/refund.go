package models

import (
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// RefundsPath is the refunds resource of docs/provider-api.md (seed article 004
// names /payments, /charges and /refunds as the operations that need a key).
const RefundsPath = "/v1/refunds"

// RefundRequest is the JSON body of POST /v1/refunds. Amount is in minor
// units of the charge's currency and at most what is left of it.
type RefundRequest struct {
	Charge            string `json:"charge"`
	Amount            int64  `json:"amount"`
	MerchantReference string `json:"merchant_reference"`
}

// Refund is a refund as the provider returns it in a 201 body and in
// GET /v1/refunds?merchant_reference=: id "re_%06d", the charge it gives
// money back from, the amount in minor units, status "succeeded".
type Refund struct {
	ID                string `json:"id"`
	Charge            string `json:"charge"`
	Amount            int64  `json:"amount"`
	Status            string `json:"status"`
	MerchantReference string `json:"merchant_reference"`
}

// RefundList is the body of GET /v1/refunds?merchant_reference=.
type RefundList struct {
	Data []Refund `json:"data"`
}

// RefundStatus is the life cycle of one refund intent.
type RefundStatus string

// The refund intent statuses of the reference client.
const (
	// RefundOpen: the outcome is not known yet; the key may be resent.
	RefundOpen RefundStatus = "Open"
	// RefundSucceeded: the provider holds a refund for this intent.
	RefundSucceeded RefundStatus = "Succeeded"
	// RefundRefused: the provider refused it (402: more than the charge's
	// remaining amount); nothing was refunded.
	RefundRefused RefundStatus = "Refused"
	// RefundAbandoned: reconciliation found no refund after AbandonAfter.
	RefundAbandoned RefundStatus = "Abandoned"
)

// RefundIntent is one refund a merchant asked for: one paid order, one
// amount in minor units, one idempotency key stored before the first send
// and sent on every try, as a payment intent's is.
type RefundIntent struct {
	ID             uuid.UUID    `json:"id"`
	OrderID        int64        `json:"order_id"`
	Charge         string       `json:"charge"`
	IdempotencyKey string       `json:"idempotency_key"`
	Amount         int64        `json:"amount"`
	CreatedAt      time.Time    `json:"created_at"`
	LastSentAt     time.Time    `json:"last_sent_at,omitzero"`
	Status         RefundStatus `json:"status"`
	// ProviderRefundID is the provider's refund id once Succeeded.
	ProviderRefundID string `json:"provider_refund_id,omitempty"`
}

// Reference is the merchant_reference the provider sees for this refund
// intent: "refund-<orderId>-<intent id as 32 hex digits>".
func (r RefundIntent) Reference() string { return RefundReference(r.OrderID, r.ID) }

// RefundReference is the merchant_reference of refund intent id of order
// orderID: "refund-<orderId>-<id as 32 hex digits>".
func RefundReference(orderID int64, id uuid.UUID) string {
	return "refund-" + strconv.FormatInt(orderID, 10) + "-" + strings.ReplaceAll(id.String(), "-", "")
}

// IsRefundReference reports whether ref names a refund intent.
func IsRefundReference(ref string) bool { return strings.HasPrefix(ref, "refund-") }

// IsRefund reports whether e is a create-refund request (POST to
// /v1/refunds, with or without a trailing slash or query).
func (e Exchange) IsRefund() bool {
	return e.Method == "POST" && strings.HasPrefix(e.Path, RefundsPath)
}

// OpRefund is a merchant's refund of a paid order (checkout.Refunder).
const OpRefund OpKind = "refund"
