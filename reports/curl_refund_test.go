package reports_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
)

// A refund exchange is replayed as POST /v1/refunds with its body rebuilt
// from the history (charge, amount, merchant reference), under its key.
func TestCurlScriptSendsARefundWithItsBody(t *testing.T) {
	f := fixture()
	ex := f.History.Exchanges[len(f.History.Exchanges)-1]
	ex.ID, ex.Seq, ex.ArrivalSeq, ex.ProviderSeq = 99, 90, 91, 92
	ex.Path, ex.RefundCharge, ex.Amount, ex.MerchantReference = models.RefundsPath, "ch_000001", 2000, "refund-1-ab"
	f.History.Exchanges = append(f.History.Exchanges, ex)
	srv, got := recorder(t)
	runScript(t, reports.CurlScript(f), "IDEMCHECK_PROVIDER_URL="+srv.URL)
	var refunds []models.RefundRequest
	for _, r := range got() {
		if r.method == "POST" && r.target == models.RefundsPath {
			var rr models.RefundRequest
			require.NoError(t, json.Unmarshal(r.body, &rr))
			refunds = append(refunds, rr)
			assert.Equal(t, models.FormatKey(ex.Key), r.key)
		}
	}
	assert.Equal(t, []models.RefundRequest{{Charge: "ch_000001", Amount: 2000, MerchantReference: "refund-1-ab"}}, refunds)
}
