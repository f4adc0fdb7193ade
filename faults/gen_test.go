package faults_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/idemcheck/idemcheck/faults"
)

// The documented bounds of Gen: delays up to 5 s, slow processing up to
// 20 s, each pushed off round values by its offset; Retry-After 1–3 s.
const (
	maxDelay = 5*time.Second + 313*time.Microsecond
	maxSlow  = 20*time.Second + 617*time.Microsecond
)

// requireWellFormed requires f to be a fault Gen may draw.
func requireWellFormed(t require.TestingT, f faults.Fault) {
	require.Contains(t, faults.Kinds(), f.Kind, "unregistered kind")
	switch f.Kind {
	case faults.KindDelay:
		require.Greater(t, f.Delay, time.Duration(0))
		require.LessOrEqual(t, f.Delay, maxDelay)
		require.Equal(t, 313*time.Microsecond, f.Delay%time.Millisecond, "delay %s is not off the round values", f.Delay)
	case faults.KindSlowProcessing:
		require.Greater(t, f.Delay, time.Duration(0))
		require.LessOrEqual(t, f.Delay, maxSlow)
		require.Equal(t, 617*time.Microsecond, f.Delay%time.Millisecond, "slow processing %s is not off the round values", f.Delay)
	case faults.KindHangUp:
		require.Equal(t, faults.HangUpAfter+313*time.Microsecond, f.Delay)
	case faults.KindChargedThenUnreachable:
		require.Equal(t, faults.ChargedThenUnreachableDelay, f.Delay)
		require.Equal(t, 617*time.Microsecond, f.Delay%time.Millisecond)
	case faults.KindSlowPastTotal:
		require.Equal(t, faults.SlowPastTotalDelay, f.Delay)
		require.Equal(t, 617*time.Microsecond, f.Delay%time.Millisecond)
	default:
		require.Zero(t, f.Delay)
	}
	if f.Kind == faults.KindStatus429 {
		require.GreaterOrEqual(t, f.RetryAfter, 1)
		require.LessOrEqual(t, f.RetryAfter, 3)
	} else {
		require.Zero(t, f.RetryAfter)
	}
	require.NotEmpty(t, f.String())
}

func TestGen_DrawsRegisteredKindsWithinBounds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		requireWellFormed(t, faults.Gen().Draw(t, "fault"))
	})
}

func TestScheduleGen_LengthAtMostN(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 30).Draw(t, "n")
		s := faults.ScheduleGen(n).Draw(t, "schedule")
		require.LessOrEqual(t, len(s), n)
		for _, f := range s {
			requireWellFormed(t, f)
		}
	})
}

// Every kind but hold (a forced interleaving the harness places) is
// reachable, and pass is the most common (about half).
func TestGen_ReachesEveryKind(t *testing.T) {
	seen := map[faults.Kind]int{}
	const n = 2000
	for i := range n {
		seen[faults.Gen().Example(i).Kind]++
	}
	for _, k := range faults.Kinds() {
		if k == faults.KindHold || k == faults.KindStoreDown || k == faults.KindProviderCrash || k == faults.KindProviderRestart || k == faults.KindStoreOutage || k == faults.KindLookupLag {
			assert.Zero(t, seen[k], "hold is placed, store-down drawn by StoreGen only, the lifecycle kinds by LifecycleScheduleGen only, lookup-lag once per sequence by the machine (LookupLagFor)")
			continue
		}
		assert.Positive(t, seen[k], "kind %s never drawn in %d examples", k, n)
	}
	assert.Greater(t, seen[faults.KindPass], n/4)
	assert.Len(t, seen, len(faults.Kinds())-6)
}

// StoreGen draws store-down and provider-crash too.
func TestStoreGen_DrawsStoreDown(t *testing.T) {
	seen := map[faults.Kind]int{}
	for i := range 2000 {
		seen[faults.StoreGen().Example(i).Kind]++
	}
	assert.Positive(t, seen[faults.KindStoreDown])
	assert.Positive(t, seen[faults.KindProviderCrash])
	assert.Zero(t, seen[faults.KindHold])
}

// A schedule survives JSON (reports and fail files store it).
func TestScheduleGen_JSONRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := faults.ScheduleGen(10).Draw(t, "schedule")
		b, err := json.Marshal(s)
		require.NoError(t, err)
		var back []faults.Fault
		require.NoError(t, json.Unmarshal(b, &back))
		require.True(t, slices.Equal(s, back) || (len(s) == 0 && len(back) == 0), "%v != %v", s, back)
	})
}
