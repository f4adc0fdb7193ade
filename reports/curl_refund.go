package reports

import (
	"encoding/json"

	"github.com/idemcheck/idemcheck/models"
)

// refundBody is the shell-quoted JSON body of refund exchange ex, rebuilt
// from the history: models.RefundRequest with the charge, amount and
// merchant reference sent.
func refundBody(ex models.Exchange) string {
	raw, _ := json.Marshal(models.RefundRequest{Charge: ex.RefundCharge, Amount: ex.Amount, MerchantReference: ex.MerchantReference}) // plain fields
	return shellQuote(string(raw))
}
