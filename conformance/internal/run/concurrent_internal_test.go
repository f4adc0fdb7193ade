package run

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/conformance/internal/machine"
)

// IDEMCHECK_CONCURRENCY takes 1 to MaxConcurrency in decimal digits and
// names itself otherwise; unset it is DefaultConcurrency, not asked for.
func TestConcurrencyFromEnv(t *testing.T) {
	for _, bad := range []string{"0", "65", "-1", "+2", " 2", "x", "1.5"} {
		_, err := ParseConcurrency(bad)
		require.ErrorContains(t, err, ConcurrencyEnv, "%q", bad)
	}
	for _, good := range []int{1, 8, MaxConcurrency} {
		n, err := ParseConcurrency(strconv.Itoa(good))
		require.NoError(t, err)
		require.Equal(t, good, n)
	}
	t.Setenv(ConcurrencyEnv, "")
	var c Config
	require.NoError(t, c.concurrencyFromEnv())
	require.Equal(t, DefaultConcurrency, c.Concurrency)
	require.True(t, c.ConcurrencyAuto)
	t.Setenv(ConcurrencyEnv, "3")
	require.NoError(t, c.concurrencyFromEnv())
	require.Equal(t, 3, c.Concurrency)
	require.False(t, c.ConcurrencyAuto)
}

// Against a URL Concurrency is the number of lanes (at most
// MaxConcurrency); in process it is ignored. A client service over HTTP
// runs that many properties once it is asked for, one by default.
func TestConcurrencyAppliesToAURLAndAServiceOverHTTP(t *testing.T) {
	url := Config{Config: machine.Config{Provider: "http://127.0.0.1:1"}, Concurrency: 4}
	require.Equal(t, 4, url.concurrency())
	url.Concurrency = 1000
	require.Equal(t, MaxConcurrency, url.concurrency())
	embedded := Config{Config: machine.Config{Provider: machine.ProviderEmbedded}, Concurrency: 4}
	require.Equal(t, 1, embedded.concurrency())
	launch := func(context.Context, string) (string, func(), error) { return "", func() {}, nil }
	svc := Config{Config: machine.Config{Provider: machine.ProviderEmbedded, Under: &machine.UnderTest{Launch: launch}}, Concurrency: 3}
	require.Equal(t, 3, svc.parallelism())
	require.Equal(t, ConcurrencyEnv, svc.parallelVar())
	svc.ConcurrencyAuto = true
	require.Equal(t, 1, svc.parallelism(), "a service runs one sequence at a time unless asked")
}

// One catalogue across lanes: a category another lane claimed is
// acknowledged at this lane's next search check, and while it shrinks,
// only what was claimed when it found its own; a category is numbered
// once, in the order deviations are recorded, up to the run's maximum.
func TestLanesShareOneCatalogue(t *testing.T) {
	shared := &lanes{n: 2, claimed: map[string]int{}, recorded: map[string]bool{}}
	a, b := &lane{lanes: shared, i: 0}, &lane{lanes: shared, i: 1}
	b.claim(&check.ViolationError{Category: "x"})
	ack := map[string]bool{}
	a.others(ack, false)
	require.Equal(t, map[string]bool{"x": true}, ack)
	a.claim(&check.ViolationError{Category: "y"})
	b.claim(&check.ViolationError{Category: "z"}) // after a found y: not in a's shrink
	ack = map[string]bool{}
	a.others(ack, true)
	require.Equal(t, map[string]bool{"x": true}, ack, "a's shrink sees the claims of when it found y")
	ack = map[string]bool{}
	b.others(ack, false)
	require.Equal(t, map[string]bool{"y": true}, ack, "b's own claims are not acknowledged for it")
	n, dup := b.number(1, "x", 3)
	require.False(t, dup)
	require.Equal(t, 1, n)
	n, dup = a.number(1, "y", 3)
	require.False(t, dup)
	require.Equal(t, 2, n, "numbered across lanes")
	_, dup = a.number(2, "x", 3)
	require.True(t, dup, "x is recorded once")
	n, _ = a.number(2, "w", 3)
	require.Equal(t, 3, n)
	_, dup = b.number(2, "v", 3)
	require.True(t, dup, "the catalogue is full at IDEMCHECK_MAX_DEVIATIONS")
	require.True(t, a.full(3))
	var none *lane
	n, dup = none.number(5, "x", 1)
	require.Equal(t, 5, n, "one lane: the round's own number")
	require.False(t, dup)
}

// A lane does not retry a round whose category another lane claimed
// first: its retry would take it as acknowledged and search in vain.
func TestLaneDoesNotRetryAnotherLanesCategory(t *testing.T) {
	shared := &lanes{n: 2, claimed: map[string]int{}, recorded: map[string]bool{}}
	a, b := &lane{lanes: shared, i: 0}, &lane{lanes: shared, i: 1}
	b.claim(&check.ViolationError{Category: "x"})
	a.claim(&check.ViolationError{Category: "x"})
	a.claim(&check.ViolationError{Category: "y"})
	require.True(t, a.takenByOther("x"))
	require.False(t, b.takenByOther("x"))
	require.False(t, a.takenByOther("y"))
	var none *lane
	require.False(t, none.takenByOther("x"))
	_, dup := a.number(1, "x", 5)
	require.True(t, dup, "b found x first: b records it, even before it has")
	n, dup := b.number(1, "x", 5)
	require.False(t, dup)
	require.Equal(t, 1, n)
}

// A lane's shrink of a category another lane found first is cut at once:
// its first shrink check ends the shrink, naming why.
func TestShrinkOfAnotherLanesCategoryIsCut(t *testing.T) {
	shared := &lanes{n: 2, claimed: map[string]int{}, recorded: map[string]bool{}}
	v := &check.ViolationError{Category: "x", Message: "m"}
	(&lane{lanes: shared, i: 1}).claim(v)
	r := &runState{lane: &lane{lanes: shared, i: 0}}
	r.round.found, r.round.smallestV = v, v
	require.Nil(t, r.shrinkEnd(machine.PhaseSearch), "a search check runs")
	got := r.shrinkEnd(machine.PhaseShrink)
	require.NotNil(t, got)
	require.Contains(t, got.Category, takenCut)
	r.lane.i, r.round.cut = 1, "" // the lane that found it first shrinks on
	require.Nil(t, r.shrinkEnd(machine.PhaseShrink))
}

// A run that checks reproducibility keeps one sequence in flight: its
// child replays take shares of the budget left, which other lanes would
// spend beside them, past the run's limit.
func TestConcurrencyIsOneWhenReproducing(t *testing.T) {
	c := Config{Config: machine.Config{Provider: "http://127.0.0.1:1"}, Concurrency: 4, Reproduce: 2}
	require.Equal(t, 1, c.concurrency())
}
