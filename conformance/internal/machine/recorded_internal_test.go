package machine

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
)

// A probe's body without members of the client's own encodes as
// json.Marshal of its ChargeRequest, byte for byte (so the kill matrix's
// probes of the reference client are what they were), and with them it
// carries them: the same payload as the client's body, which the
// fingerprint then finds equal.
func TestProbeBodyEncodesTheClientsMembers(t *testing.T) {
	cr := models.ChargeRequest{Amount: 54890, Currency: "TRY", Source: "tok_visa", Description: "Order #7", MerchantReference: "shop-7-a"}
	plain, err := json.Marshal(cr)
	require.NoError(t, err)
	assert.Equal(t, string(plain), string(probeBody{ChargeRequest: cr}.encode()))
	assert.Equal(t, string(plain), string(probeBody{ChargeRequest: cr, extra: json.RawMessage(`{}`)}.encode()))
	indented, err := json.MarshalIndent(cr, " ", "\t")
	require.NoError(t, err)
	assert.Equal(t, "\n "+string(indented)+" \r\n", string(shapeOf(shapeWhitespace, plain).raw), "the whitespace shape as before")

	sent := []byte(`{"metadata": {"cart": {"items": 2}, "channel": "web"}, "merchant_reference": "shop-7-a", "amount": 54890,
		"currency": "TRY", "source": "tok_visa", "description": "Order #7", "note": null}`)
	extra := models.ExtraMembers(sent, cr)
	assert.JSONEq(t, `{"metadata":{"cart":{"items":2},"channel":"web"},"note":null}`, string(extra))
	b := probeBody{ChargeRequest: cr, extra: extra}.encode()
	require.True(t, json.Valid(b), "%s", b)
	assert.Equal(t, models.PayloadFingerprint(sent, cr), models.PayloadFingerprint(b, cr), "the probe's body is the client's payload")
	for _, kind := range []string{shapeReordered, shapeWhitespace} {
		raw := shapeOf(kind, b).raw
		assert.Equal(t, models.PayloadFingerprint(sent, cr), models.PayloadFingerprint(raw, cr), "%s: %s", kind, raw)
	}
	assert.Nil(t, models.ExtraMembers(plain, cr), "a contract-only body has none")
	assert.Nil(t, models.ExtraMembers([]byte(`[1]`), cr), "no object")
}
