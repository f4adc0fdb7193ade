package models

// OrderStatus is where an order stands from the shopper's point of view.
type OrderStatus string

// The order statuses of the reference client (seed article 000).
const (
	// OrderPlaced: the order exists and nothing is being charged for it.
	OrderPlaced OrderStatus = "Placed"
	// OrderPaymentPending: a payment attempt is open and its outcome unknown.
	OrderPaymentPending OrderStatus = "PaymentPending"
	// OrderPaid: a payment attempt succeeded; ProviderChargeID names the charge.
	OrderPaid OrderStatus = "Paid"
)

// Order is one shopper order. Total is in minor units of Currency
// (548.90 TRY is 54890).
type Order struct {
	ID               int64       `json:"id"`
	Total            int64       `json:"total"`
	Currency         string      `json:"currency"`
	Status           OrderStatus `json:"status"`
	ProviderChargeID string      `json:"provider_charge_id,omitempty"`
}
