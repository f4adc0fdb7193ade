package check_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/models"
)

// keyFormat is key-format alone over w.
func keyFormat(w check.World) *check.ViolationError {
	for _, inv := range check.Safety() {
		if inv.Name == check.KeyFormat {
			return check.Evaluate(w, []check.Invariant{inv})
		}
	}
	return nil
}

// In Stripe's dialect a key is opaque, bare and up to 255 characters:
// stripe-go's own (<unix nanos>_<6 characters>) is well formed there,
// and judged by the reference dialect's rules it is not (issue 27: every
// SDK client failed key-format on its first sequence).
func TestKeyFormatFollowsTheDialect(t *testing.T) {
	for _, c := range []struct {
		name, header string
		stripe       bool
		want         string // "" holds
	}{
		{"stripe-go's key in Stripe's dialect", "1733228400000000000_Hm2SQg", true, ""},
		{"a key of 255 characters", strings.Repeat("k", 255), true, ""},
		{"a quoted key is opaque too", `"order-1"`, true, ""},
		{"stripe-go's key in the reference dialect", "1733228400000000000_Hm2SQg", false,
			"key-format: order 1 intent 1 sent the key unquoted or malformed, want a Structured Field String"},
		{"a key of 256 characters", strings.Repeat("k", 256), true,
			"key-format: order 1 intent 1 sent an Idempotency-Key longer than Stripe's 255 characters"},
		{"a key outside printable ASCII", "order-1-ü", true,
			"key-format: order 1 intent 1 sent an Idempotency-Key with a character outside printable ASCII"},
		{"two Idempotency-Key headers", "order-1, order-2", true,
			"key-format: order 1 intent 1 sent the Idempotency-Key header twice"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture()
			e := f.post(f.att.IdempotencyKey, 503, "", 0, "")
			e.KeyHeader, e.Key = c.header, strings.TrimSpace(strings.Split(c.header, ", ")[0])
			if c.stripe {
				e.Dialect = models.DialectStripe
			}
			f.w.Attempts[0].IdempotencyKey = e.Key
			v := keyFormat(f.w)
			if c.want == "" {
				assert.Nil(t, v)
				return
			}
			require.NotNil(t, v)
			assert.Equal(t, c.want, v.Message)
		})
	}
}
