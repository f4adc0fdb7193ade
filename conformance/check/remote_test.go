package check

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/models"
)

// ans is one keyed create the provider answered: key, body fingerprint,
// status and charge id, and its arrival and answer in the history's order
// of events.
type ans struct {
	key, body string
	status    int
	charge    string
	arrive    int // ArrivalSeq
	done      int // ProviderSeq
}

// remoteWorld is a World holding the creates given, forwarded and answered.
func remoteWorld(as ...ans) World {
	var exs []models.Exchange
	for i, a := range as {
		exs = append(exs, models.Exchange{
			ID: i + 1, Method: "POST", Key: a.key, HasKey: true, Fingerprint: a.body,
			MerchantReference: "bookstore-1-" + a.key, Forwarded: true,
			ArrivalSeq: a.arrive, ProviderDone: true, ProviderSeq: a.done,
			ProviderStatus: a.status, ProviderBodyDigest: a.status2digest(), ProviderChargeID: a.charge,
		})
	}
	return World{History: models.Snapshot{Exchanges: exs}, memo: &memo{}}
}

// foreign marks the answers of exchanges i (indexes into w's) as not of
// the dialect (models.OfDialect), as the wire records a 201 of random
// bytes.
func foreign(w World, i ...int) World {
	for _, j := range i {
		w.History.Exchanges[j].ProviderForeign = true
	}
	return w
}

// status2digest stands for the answer body's digest.
func (a ans) status2digest() string {
	return a.body + "/" + a.charge + "/" + string(rune('0'+a.status/100))
}

// TestRemoteProviderOnlyInvariants: what replay-consistent and
// mismatch-rejected judge from a remote provider's answers alone.
func TestRemoteProviderOnlyInvariants(t *testing.T) {
	cases := []struct {
		name         string
		errorsStored bool
		world        World
		want         string // the violated invariant, "" when both hold
	}{
		{"a replay of the first answer", true, remoteWorld(
			ans{"k1", "b1", 201, "ch_1", 1, 2}, ans{"k1", "b1", 201, "ch_1", 3, 4}), ""},
		{"a retry charged anew", true, remoteWorld(
			ans{"k1", "b1", 201, "ch_1", 1, 2}, ans{"k1", "b1", 201, "ch_2", 3, 4}), ReplayConsistent},
		{"409 while the first is in flight", true, remoteWorld(
			ans{"k1", "b1", 201, "ch_1", 1, 4}, ans{"k1", "b1", 409, "", 2, 3}), ""},
		{"409 after the key was answered", true, remoteWorld(
			ans{"k1", "b1", 201, "ch_1", 1, 2}, ans{"k1", "b1", 409, "", 3, 4}), ReplayConsistent},
		{"503 then the charge: the 503 took nothing", true, remoteWorld(
			ans{"k1", "b1", 503, "", 1, 2}, ans{"k1", "b1", 201, "ch_1", 3, 4}), ""},
		{"a stored decline then a charge", true, remoteWorld(
			ans{"k1", "b1", 402, "", 1, 2}, ans{"k1", "b1", 201, "ch_1", 3, 4}), ReplayConsistent},
		{"a decline not stored (profile), then a charge", false, remoteWorld(
			ans{"k1", "b1", 402, "", 1, 2}, ans{"k1", "b1", 201, "ch_1", 3, 4}), ""},
		{"another body refused", true, remoteWorld(
			ans{"k1", "b1", 201, "ch_1", 1, 2}, ans{"k1", "b2", 422, "", 3, 4}), ""},
		{"another body charged", true, remoteWorld(
			ans{"k1", "b1", 201, "ch_1", 1, 2}, ans{"k1", "b2", 201, "ch_2", 3, 4}), MismatchRejected},
		{"two answers of random bytes to one key and body", true, foreign(remoteWorld(
			ans{"k1", "b1", 201, "", 1, 2}, ans{"k1", "b1", 201, "x", 3, 4}), 0, 1), ""},
		{"two answers of random bytes to one key and two bodies", true, foreign(remoteWorld(
			ans{"k1", "b1", 201, "", 1, 2}, ans{"k1", "b2", 201, "x", 3, 4}), 0, 1), ""},
		{"a charge, then random bytes for its replay", true, foreign(remoteWorld(
			ans{"k1", "b1", 201, "ch_1", 1, 2}, ans{"k1", "b1", 201, "", 3, 4}), 1), ReplayConsistent},
		{"random bytes, then a charge for another body", true, foreign(remoteWorld(
			ans{"k1", "b1", 201, "", 1, 2}, ans{"k1", "b2", 201, "ch_2", 3, 4}), 0), MismatchRejected},
		{"two keys, two charges", true, remoteWorld(
			ans{"k1", "b1", 201, "ch_1", 1, 2}, ans{"k2", "b2", 201, "ch_2", 3, 4}), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := Evaluate(tc.world, RemoteSafety([]Invariant{
				{Name: ReplayConsistent}, {Name: MismatchRejected},
			}, tc.errorsStored))
			if tc.want == "" {
				assert.Nil(t, v)
				return
			}
			if assert.NotNil(t, v) {
				assert.Equal(t, tc.want, v.Invariant, v.Message)
				assert.True(t, strings.HasPrefix(v.Message, tc.want+": "), v.Message)
			}
		})
	}
}
