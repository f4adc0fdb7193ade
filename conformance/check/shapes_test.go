package check_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/models"
)

// paidFixture is order 1 paid with ch_000001 under the attempt's key.
func paidShapeFixture() *fixture {
	f := newFixture()
	f.post(f.att.IdempotencyKey, 201, "", 201, "ch_000001")
	f.charge("ch_000001")
	f.succeed("ch_000001")
	f.result("Paid")
	return f
}

// probeAs appends a probe under the attempt's key whose operation's Detail
// is kind (a request shape or "same body, another account").
func (f *fixture) probeAs(kind string, provider int, charge string) *models.Exchange {
	op := len(f.w.History.Ops) + 1
	f.w.History.Ops = append(f.w.History.Ops, models.Operation{ID: op, Step: op, Kind: models.OpProbe, OrderID: 1, Detail: kind, Returned: true})
	e := f.post(f.att.IdempotencyKey, provider, "", provider, charge)
	e.OpID = op
	return e
}

// shapeProbe appends a shape probe as the property sends it: the control
// in the client's shape first (a replay of ch_000001), then kind.
func (f *fixture) shapeProbe(kind string, provider int, charge string) {
	f.probeAs("", 201, "ch_000001")
	f.probeAs(kind, provider, charge)
}

func TestEquivalentRequestsAgree(t *testing.T) {
	f := paidShapeFixture()
	f.shapeProbe("same body, trailing slash", 201, "ch_000001")   // the replay
	f.shapeProbe("same body, unrelated query parameter", 404, "") // a refusal
	require.Nil(t, violated(t, f.w), "the replay or a refusal holds")

	second := paidShapeFixture()
	second.shapeProbe("same body, trailing slash", 201, "ch_000002")
	second.charge("ch_000002")
	v := violated(t, second.w)
	require.NotNil(t, v)
	assert.Equal(t, check.EquivalentRequestsAgree, v.Invariant, "named before the second charge's consequences")
	assert.Equal(t, "equivalent-requests-agree: order 1 intent 1: the same request with a trailing slash under a completed key was answered 201 ch_000002, not the first response (201 ch_000001)", v.Message)

	refused := paidShapeFixture()
	refused.shapeProbe("same body, fields in another order", 422, "")
	v = violated(t, refused.w)
	require.NotNil(t, v)
	assert.Equal(t, check.EquivalentRequestsAgree, v.Invariant)
	assert.Contains(t, v.Message, "refused with 422 as another body")

	// One answer in the client's shape does not show that the key
	// replays (against a URL, the client's own answer may have been lost):
	// the shape is not judged; the second charge still is, by its
	// consequence.
	unshown := paidShapeFixture()
	unshown.probeAs("same body, trailing slash", 201, "ch_000002")
	unshown.charge("ch_000002")
	v = violated(t, unshown.w)
	require.NotNil(t, v)
	assert.Equal(t, check.AtMostOneChargePerOrder, v.Invariant, v.Message)
}

// A shape is a subject of equivalent-requests-agree (what makes it PASS
// rather than INCONCLUSIVE, held vacuously) only when judged under a key
// whose first answer was a charge: under a declined key every shape
// repeats the decline whatever the provider keys by, and shows nothing.
// Regression (outside tester): a provider that declined every create
// passed the shape checks.
func TestEquivalentRequestsAgree_SubjectsOnlyUnderACharge(t *testing.T) {
	paid := paidShapeFixture()
	paid.shapeProbe("same body, trailing slash", 201, "ch_000001")
	assert.Equal(t, 1, check.Coverage(paid.w)[check.EquivalentRequestsAgree], "judged under a charge")

	declined := newFixture()
	declined.post(declined.att.IdempotencyKey, 402, "", 402, "")
	declined.w.Attempts[0].Status, declined.w.Orders[0].Status = models.AttemptDeclined, models.OrderPlaced
	declined.result("Declined")
	declined.probeAs("", 402, "")
	declined.probeAs("same body, trailing slash", 402, "")
	declined.probeAs("", 402, "")
	declined.probeAs("same body, other whitespace", 402, "")
	require.Nil(t, violated(t, declined.w), "a repeated decline breaks nothing")
	assert.Equal(t, 0, check.Coverage(declined.w)[check.EquivalentRequestsAgree], "the declines showed nothing")

	unsteady := paidShapeFixture() // a provider that answers every create with a new charge
	unsteady.probeAs("", 201, "ch_000002")
	unsteady.probeAs("same body, trailing slash", 201, "ch_000003")
	assert.Equal(t, 0, check.Coverage(unsteady.w)[check.EquivalentRequestsAgree], "a key not shown to replay judges no shape")
}

func TestKeyScopedPerAccount(t *testing.T) {
	f := paidShapeFixture()
	f.probeAs("same body, another account", 201, "ch_000002")
	f.w.OtherCharges = []models.Charge{{ID: "ch_000002", Status: "succeeded", MerchantReference: f.att.Reference()}}
	require.Nil(t, violated(t, f.w), "merchant B's own charge, in its own ledger, is no violation of anything")

	for name, c := range map[string]struct {
		status int
		charge string
		want   string
	}{
		"leaked":  {201, "ch_000001", "the first account's stored response"},
		"blocked": {409, "", "one account's key blocked another's"},
	} {
		g := paidShapeFixture()
		g.probeAs("same body, another account", c.status, c.charge)
		v := violated(t, g.w)
		require.NotNil(t, v, name)
		assert.Equal(t, check.KeyScopedPerAccount, v.Invariant, name)
		assert.Contains(t, v.Message, c.want, name)
	}

	mixed := paidShapeFixture()
	mixed.probeAs("same body, another account", 201, "ch_000002")
	mixed.charge("ch_000002") // in merchant A's ledger
	v := violated(t, mixed.w)
	require.NotNil(t, v)
	assert.Equal(t, check.KeyScopedPerAccount, v.Invariant)
}

// A key the provider forgot (a retention too short: the
// redis-ttl-seconds-as-ms mutant) charges again whatever the shape: the
// shape probe's control request in the client's shape, sent just before,
// shows it, and replay-consistent names it; the shape got the key's answer
// as it stands and is no deviation of its own. Before the control, a
// loaded kill-matrix run named this equivalent-requests-agree.
func TestEquivalentRequestsAgreeLeavesAForgottenKeyToReplayConsistent(t *testing.T) {
	f := paidShapeFixture()
	f.probeAs("", 201, "ch_000002") // the control: charged anew
	f.charge("ch_000002")
	f.probeAs("same body, trailing slash", 201, "ch_000002") // the key's answer now
	v := violated(t, f.w)
	require.NotNil(t, v)
	assert.Equal(t, check.ReplayConsistent, v.Invariant, v.Message)

	again := paidShapeFixture() // a provider that charges every replay anew (replay-new-charge)
	again.probeAs("", 201, "ch_000002")
	again.charge("ch_000002")
	again.probeAs("same body, trailing slash", 201, "ch_000003")
	again.charge("ch_000003")
	v = violated(t, again.w)
	require.NotNil(t, v)
	assert.Equal(t, check.ReplayConsistent, v.Invariant, v.Message)

	g := paidShapeFixture()
	g.probeAs("", 201, "ch_000001")                          // the control replays
	g.probeAs("same body, trailing slash", 201, "ch_000002") // the shape charges anew
	g.charge("ch_000002")
	v = violated(t, g.w)
	require.NotNil(t, v)
	assert.Equal(t, check.EquivalentRequestsAgree, v.Invariant, v.Message)
}
