package check_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/models"
)

// no-stale-key: a resend at exactly the retention window holds; one past
// it is caught, even when nothing was charged; a probe is not judged.
func TestNoStaleKey(t *testing.T) {
	resend := func(after time.Duration, op int) check.World {
		f := newFixture()
		f.post(f.att.IdempotencyKey, 503, "", 0, "")
		f.w.History.Ops = append(f.w.History.Ops, models.Operation{ID: 2, Step: 2, Kind: models.OpProbe, OrderID: 1, Returned: true})
		e := f.post(f.att.IdempotencyKey, 503, "", 0, "")
		e.SentAt, e.OpID = t0.Add(after), op
		f.result("Unavailable")
		return f.w
	}
	safety := check.Safety()
	assert.Nil(t, check.Evaluate(resend(24*time.Hour, 1), safety), "at the window")
	assert.Nil(t, check.Evaluate(resend(25*time.Hour, 2), safety), "a probe is the harness's own request")
	v := check.Evaluate(resend(25*time.Hour, 1), safety)
	require.NotNil(t, v)
	assert.Equal(t, "no-stale-key: order 1 intent 1 resent its key 25h0m0s after its first send, past the 24h0m0s retention window", v.Message)
	assert.Equal(t, "no-stale-key: … resent its key … after its first send, past the … retention window", v.Category)
}
