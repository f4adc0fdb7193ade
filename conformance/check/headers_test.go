package check_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/models"
)

// TestReplayConsistent_ComparesHeaders: a replay that drops the first
// answer's Location breaks replay-consistent; one that repeats it and adds
// the replay header does not.
func TestReplayConsistent_ComparesHeaders(t *testing.T) {
	f := newFixture()
	first := f.post(f.att.IdempotencyKey, 0, "timeout", 201, "ch_000001")
	first.ProviderHeaders = models.ResponseHeaders{Location: "/v1/charges/ch_000001", ContentType: "application/json"}
	replay := f.post(f.att.IdempotencyKey, 201, "", 201, "ch_000001")
	replay.ProviderHeaders = models.ResponseHeaders{Location: "/v1/charges/ch_000001", ContentType: "application/json", Replay: "true"}
	f.charge("ch_000001")
	f.succeed("ch_000001")
	f.result("Paid")
	assert.Nil(t, violated(t, f.w))

	f.w.History.Exchanges[1].ProviderHeaders.Location = ""
	v := violated(t, f.w)
	require.NotNil(t, v)
	assert.Equal(t, "replay-consistent: order 1 intent 1: the replay of 201 ch_000001 changed a header of the first response (Location: /v1/charges/ch_000001 → absent)", v.Message)
}

// TestReplayConsistent_DeclineRunAgainBySideEffect: two identical 402s
// under one key pass by their bodies, but a provider that counts two
// processed declines ran the stored decline again.
func TestReplayConsistent_DeclineRunAgainBySideEffect(t *testing.T) {
	f := newFixture()
	f.post(f.att.IdempotencyKey, 402, "", 402, "")
	f.post(f.att.IdempotencyKey, 402, "", 402, "")
	f.w.Attempts[0].Status = models.AttemptDeclined
	f.w.Orders[0].Status = models.OrderPlaced
	f.result("Declined")
	f.w.Declines = 1
	assert.Nil(t, violated(t, f.w))
	f.w.Declines = -1
	assert.Nil(t, violated(t, f.w), "not counted: not judged")
	f.w.Declines = 2
	v := violated(t, f.w)
	require.NotNil(t, v)
	assert.Equal(t, check.ReplayConsistent, v.Invariant)
	assert.Contains(t, v.Message, "processed 2 declines but answered only 1 requests 402 under a free key")
}

// TestReplayConsistent_OtherAccountsDeclineIsItsOwn: merchant B sending a
// declined key of merchant A is a fresh decline in B's key space (the
// reference scopes keys per account), not a stored decline run again: the
// side-effect count allows it. It failed the reference at random before
// (the two probe kinds were merged at once).
func TestReplayConsistent_OtherAccountsDeclineIsItsOwn(t *testing.T) {
	f := newFixture()
	f.post(f.att.IdempotencyKey, 402, "", 402, "")
	f.w.Attempts[0].Status = models.AttemptDeclined
	f.w.Orders[0].Status = models.OrderPlaced
	f.result("Declined")
	f.probeAs("same body, another account", 402, "")
	f.w.Declines = 2
	assert.Nil(t, violated(t, f.w))
	f.w.Declines = 3
	require.NotNil(t, violated(t, f.w), "a third decline is one run again")
}

// TestKeyScopedPerAccount_OwnConflictIsNotAs: merchant B's second request
// under a key, while B's first is still at the provider, gets B's own 409;
// its problem body is byte-identical to the 409 merchant A once got, and
// was taken for A's stored response (the 20 000-sequence run, seed
// 20261201, on the reference).
func TestKeyScopedPerAccount_OwnConflictIsNotAs(t *testing.T) {
	f := newFixture()
	f.post(f.att.IdempotencyKey, 201, "", 201, "ch_1")
	f.post(f.att.IdempotencyKey, 409, "", 409, "")
	f.charge("ch_1")
	f.succeed("ch_1")
	b1 := f.probeAs("same body, another account", 0, "")
	b1.Forwarded, b1.ArrivalSeq, b1.Done, b1.Err = true, b1.Seq+1, true, "timeout"
	f.probeAs("same body, another account", 409, "")
	v := violated(t, f.w)
	if v != nil {
		assert.NotEqual(t, check.KeyScopedPerAccount, v.Invariant, v.Message)
	}
}
