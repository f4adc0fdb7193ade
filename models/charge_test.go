package models_test

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/models"
)

var visa = models.ChargeRequest{
	Amount:            54890,
	Currency:          "TRY",
	Source:            "tok_visa",
	Description:       "Bookstore order 1001",
	MerchantReference: "bookstore-1001-a",
}

func sha256Hex(b string) string {
	sum := sha256.Sum256([]byte(b))
	return hex.EncodeToString(sum[:])
}

func TestFingerprint_IsStable(t *testing.T) {
	fp := models.Fingerprint(visa)
	assert.Equal(t, fp, models.Fingerprint(visa))
	assert.Regexp(t, `^[0-9a-f]{64}$`, fp)
	// The canonical form is the JSON with the fields in the struct's order;
	// stored histories and golden files depend on it not changing.
	assert.Equal(t, sha256Hex(`{"amount":54890,"currency":"TRY","source":"tok_visa",`+
		`"description":"Bookstore order 1001","merchant_reference":"bookstore-1001-a"}`), fp)
}

func TestFingerprint_DiffersWhenAnyFieldDiffers(t *testing.T) {
	base := models.Fingerprint(visa)
	mutations := map[string]func(*models.ChargeRequest){
		"amount":             func(r *models.ChargeRequest) { r.Amount++ },
		"currency":           func(r *models.ChargeRequest) { r.Currency = "EUR" },
		"source":             func(r *models.ChargeRequest) { r.Source = "tok_mastercard" },
		"description":        func(r *models.ChargeRequest) { r.Description += "." },
		"merchant_reference": func(r *models.ChargeRequest) { r.MerchantReference = "bookstore-1001-b" },
	}
	seen := map[string]string{base: "base"}
	for field, mutate := range mutations {
		r := visa
		mutate(&r)
		fp := models.Fingerprint(r)
		assert.NotEqual(t, base, fp, "changing %s left the fingerprint alike", field)
		if prev, dup := seen[fp]; dup {
			t.Errorf("%s and %s share a fingerprint", field, prev)
		}
		seen[fp] = field
	}
}

func TestBodyDigest_IgnoresKeyOrderAndSpacing(t *testing.T) {
	a := models.BodyDigest([]byte(`{"a":1,"b":2}`))
	assert.Equal(t, a, models.BodyDigest([]byte(`{"b":2, "a":1}`)))
	assert.Equal(t, a, models.BodyDigest([]byte("{\n  \"b\": 2,\n  \"a\": 1\n}\n")))
	assert.Equal(t, sha256Hex(`{"a":1,"b":2}`), a, "the canonical form is compact with sorted keys")

	nested := models.BodyDigest([]byte(`{"z":{"y":[1,{"b":true,"a":null}]},"a":"x"}`))
	assert.Equal(t, nested, models.BodyDigest([]byte(`{"a":"x","z":{"y":[1,{"a":null,"b":true}]}}`)))
}

func TestBodyDigest_DiffersForDifferentValues(t *testing.T) {
	cases := [][2]string{
		{`{"a":1,"b":2}`, `{"a":1,"b":3}`},
		{`{"a":1}`, `{"a":"1"}`},
		{`{"a":1}`, `{"a":1,"b":null}`},
		{`[1,2]`, `[2,1]`},
		{`{"id":"ch_000001"}`, `{"id":"ch_000002"}`},
	}
	for _, c := range cases {
		assert.NotEqual(t, models.BodyDigest([]byte(c[0])), models.BodyDigest([]byte(c[1])), "%s vs %s", c[0], c[1])
	}
}

func TestBodyDigest_NonJSONDigestedAsIs(t *testing.T) {
	assert.Equal(t, "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824", models.BodyDigest([]byte("hello")))
	assert.Equal(t, sha256Hex(`{"a":1} trailing`), models.BodyDigest([]byte(`{"a":1} trailing`)))
	assert.Equal(t, sha256Hex(""), models.BodyDigest(nil))
	assert.NotEqual(t, models.BodyDigest([]byte("hello")), models.BodyDigest([]byte("hello ")))
}

// Regression: BodyDigest once decoded numbers as float64, so integers
// beyond 2^53 lost their low digits and two different charge bodies
// (amounts are int64 minor units) got one digest.
func TestBodyDigest_DistinguishesIntegersBeyondFloat64Precision(t *testing.T) {
	a := models.BodyDigest([]byte(`{"amount":9007199254740993}`))
	b := models.BodyDigest([]byte(`{"amount":9007199254740992}`))
	assert.NotEqual(t, a, b, "2^53+1 and 2^53 digest alike")
	assert.Equal(t, sha256Hex(`{"amount":9007199254740993}`), a)
}

// BUG (models/charge.go BodyDigest): a JSON value followed by a stray `}`
// or `]` is not JSON, so the doc says it is digested as it is; but
// json.Decoder.More reports false before a closing delimiter, so the
// trailing bytes are silently dropped and `{"a":1}}` digests like
// `{"a":1}`. This test fails until BodyDigest checks json.Valid (or that
// only JSON whitespace follows the decoded value).
func TestBodyDigest_JSONFollowedByStrayCloserIsNotJSON(t *testing.T) {
	for _, body := range []string{`{"a":1}}`, `{"a":1}]`, `{"a":1} }`, `[1]]`} {
		assert.Equal(t, sha256Hex(body), models.BodyDigest([]byte(body)), "%s is not JSON: digested as it is", body)
	}
}

// The fingerprint covers the whole payload (docs/provider-api.md, draft
// §2.4): a contract-only body in any member order or whitespace is
// Fingerprint of what it decodes to; a member outside the contract, or a
// contract field left out, is another request.
func TestPayloadFingerprint_CoversTheWholePayload(t *testing.T) {
	fp := models.Fingerprint(visa)
	for _, body := range []string{
		`{"amount":54890,"currency":"TRY","source":"tok_visa","description":"Bookstore order 1001","merchant_reference":"bookstore-1001-a"}`,
		`{"merchant_reference":"bookstore-1001-a","description":"Bookstore order 1001","source":"tok_visa","currency":"TRY","amount":54890}`,
		"\n {\"amount\": 54890,\t\"currency\": \"TRY\", \"source\": \"tok_visa\", \"description\": \"Bookstore order 1001\", \"merchant_reference\": \"bookstore-1001-a\"}\r\n",
	} {
		assert.Equal(t, fp, models.PayloadFingerprint([]byte(body), visa), "%s", body)
		got, contractOnly := models.PayloadFingerprintOf([]byte(body), visa)
		assert.True(t, contractOnly && got == fp, "%s", body)
	}
	_, contractOnly := models.PayloadFingerprintOf([]byte(`{"amount":54890,"currency":"TRY","source":"tok_visa","description":"Bookstore order 1001","merchant_reference":"bookstore-1001-a","metadata":{}}`), visa)
	assert.False(t, contractOnly, "a member outside the contract")
	_, contractOnly = models.PayloadFingerprintOf([]byte("amount=1"), models.ChargeRequest{})
	assert.False(t, contractOnly, "not JSON")
	withMeta := func(meta string) string {
		return models.PayloadFingerprint([]byte(`{"amount":54890,"currency":"TRY","source":"tok_visa","description":"Bookstore order 1001",`+
			`"merchant_reference":"bookstore-1001-a","metadata":`+meta+`}`), visa)
	}
	assert.NotEqual(t, fp, withMeta(`{"try":1}`))
	assert.NotEqual(t, withMeta(`{"try":1}`), withMeta(`{"try":2}`))
	assert.Equal(t, withMeta(`{"a":1,"b":2}`), withMeta(`{ "b": 2, "a": 1 }`), "nested members in another order")
	noDescription := visa
	noDescription.Description = ""
	assert.NotEqual(t, models.Fingerprint(noDescription), models.PayloadFingerprint(
		[]byte(`{"amount":54890,"currency":"TRY","source":"tok_visa","merchant_reference":"bookstore-1001-a"}`), noDescription),
		"a field left out is not the field empty")
	assert.Equal(t, sha256Hex("amount=1"), models.PayloadFingerprint([]byte("amount=1"), models.ChargeRequest{}), "not JSON: its bytes")
}
