package run

import (
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/sut/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseShard(t *testing.T) {
	for v, want := range map[string]Shard{"": {}, "0/1": {0, 1}, "3/16": {3, 16}, "15/16": {15, 16}} {
		got, err := ParseShard(v)
		require.NoError(t, err, v)
		assert.Equal(t, want, got, v)
	}
	for _, v := range []string{"16/16", "-1/4", "1/0", "1", "a/b", "1/2/3", "2/1", " 0/2", "0/ 2", "+0/2", "-0/2"} {
		_, err := ParseShard(v)
		require.Error(t, err, v)
		assert.Contains(t, err.Error(), `IDEMCHECK_SHARD="`+v+`" is not a shard i/n with 0 ≤ i < n`)
	}
}

// TestShardSeedsAreDisjoint: the seeds rapid draws from (base+k(k+1)/2
// for the k-th check) of every property of every shard lie in disjoint
// intervals, for a base near the top of the seed space too.
func TestShardSeedsAreDisjoint(t *testing.T) {
	const checks = 1_000_000
	span := uint64(checks) * (checks + 1) / 2 // the last check's offset
	for _, base := range []uint64{1, 7, ^uint64(0) - 3} {
		type interval struct{ lo, hi uint64 } // hi may wrap below lo
		var got []interval
		for i := range 16 {
			for p := range 2 {
				lo := Shard{i, 16}.streamSeed(base, p, 2)
				got = append(got, interval{lo, lo + span})
			}
		}
		assert.Equal(t, base, got[0].lo, "shard 0's first property starts at the base seed")
		for a := range got {
			for b := range got {
				if a != b {
					d := got[b].lo - got[a].lo // distance, modulo 2^64
					assert.Greater(t, d, span, "intervals %d and %d overlap (base %d)", a, b, base)
				}
			}
		}
	}
	assert.Equal(t, uint64(42), Shard{}.streamSeed(42, 0, 1), "an unsharded lone property keeps the seed")
}

func TestShardBudgets(t *testing.T) {
	l := Shard{1, 4}.Limits(remote.Limits{MaxRequests: 1000, MaxDuration: time.Hour})
	assert.Equal(t, 250, l.MaxRequests)
	assert.Equal(t, remote.DefaultMaxCharges/4, l.MaxCharges, "a default budget is shared too")
	assert.Equal(t, 15*time.Minute, l.MaxDuration)
	assert.Equal(t, remote.Limits{MaxRequests: 7}, Shard{}.Limits(remote.Limits{MaxRequests: 7}), "the whole run keeps its budgets")
	tiny := Shard{0, 16}.Limits(remote.Limits{MaxRequests: 3, MaxCharges: 3, MaxDuration: time.Second})
	assert.Equal(t, remote.Limits{MaxRequests: 1, MaxCharges: 1, MaxDuration: time.Second}, tiny)
}
