package faults_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
)

// A refund request is recorded as a refund, not a create-charge, with the
// charge it names; the in-process provider's answer carries the refund id.
func TestTransport_RecordsARefund(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newRig(0)
		ch := r.post(t.Context(), models.FormatKey("k-charge"), visa)
		require.Equal(t, http.StatusCreated, ch.status)
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://provider/v1/refunds",
			strings.NewReader(`{"charge":"ch_000001","amount":100,"merchant_reference":"refund-1-a"}`))
		require.NoError(t, err)
		req.Header.Set(models.IdempotencyKeyHeader, models.FormatKey("k-refund"))
		resp, err := r.client.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		require.Equal(t, http.StatusCreated, resp.StatusCode)

		e := exchanges(t, r.hist, 2)[1]
		assert.True(t, e.IsRefund())
		assert.False(t, e.IsPost(), "not a create-charge: the charge invariants leave it alone")
		assert.Equal(t, "ch_000001", e.RefundCharge)
		assert.Equal(t, int64(100), e.Amount)
		assert.Equal(t, "refund-1-a", e.MerchantReference)
		assert.Equal(t, "re_000001", e.ProviderChargeID)
	})
}
