package models

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// digestSeeds are bodies a provider answers, and the shapes canonical must
// leave to encoding/json.
var digestSeeds = []string{
	`{"id":"ch_000001","amount":1250,"currency":"EUR","status":"succeeded","merchant_reference":"order-7","created":"2026-01-01T00:00:00Z"}`,
	`{"data":[{"id":"ch_000001","amount":1250},{"id":"ch_000002","amount":99}],"has_more":false}`,
	`{"type":"about:blank","title":"Conflict","status":409,"detail":"a request with this key is being processed"}`,
	`{"error":{"type":"card_error","code":"card_declined","decline_code":"insufficient_funds","decline_id":"dc_000001"}}`,
	" {\n \"b\" : [ 1 , 2.50 , -0 , 1e400 , 12345678901234567890 ] ,\t\"a\" : { } , \"c\" : [ ] } ",
	`{"a":1,"a":2}`, `{"a":{"x":1,"x":[2]}}`, `{"<":"&"}`, `{"k":"caf\u00e9"}`, `{"k":"café"}`, `{"k":"a\"b"}`,
	`"plain"`, `12`, `true`, `null`, `[]`, `{}`, `[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`,
	`{"z":{"y":[1,{"b":true,"a":null}]},"a":"x","B":"upper sorts first"}`,
}

// TestCanonicalIsEncodingJSONs holds canonical to encoding/json's form
// (decode with UseNumber, marshal) wherever it answers, and makes sure it
// answers for every provider body above.
func TestCanonicalIsEncodingJSONs(t *testing.T) {
	for i, s := range digestSeeds {
		got, ok := canonical(nil, []byte(s))
		if i < 5 {
			require.True(t, ok, "canonical answers for the provider's body %s", s)
		}
		if ok {
			assert.Equal(t, string(canonicalSlow([]byte(s))), string(got), "body %s", s)
		}
	}
}

func FuzzBodyDigestCanonical(f *testing.F) {
	for _, s := range digestSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) {
			return
		}
		if got, ok := canonical(nil, []byte(s)); ok {
			want := canonicalSlow([]byte(s))
			if string(got) != string(want) {
				t.Fatalf("canonical(%q) = %q, encoding/json gives %q", s, got, want)
			}
		}
	})
}

// TestBodyDigest_ProviderBodyAllocatesLittle: a charge body digests with
// one allocation (the hex string), not a map per object (issue 29: 9
// before). Under -race sync.Pool drops some buffers, each a second one.
func TestBodyDigest_ProviderBodyAllocatesLittle(t *testing.T) {
	body := []byte(digestSeeds[1])
	allocs := testing.AllocsPerRun(100, func() { _ = BodyDigest(body) })
	most := 1.0
	if raceEnabled {
		most = 2
	}
	assert.LessOrEqual(t, allocs, most)
}
