package faults_test

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/faults"
)

// Charged-then-unreachable: the first try's charge lands after the client
// gave up on it, and every later try of the step is an outage (the
// provider never sees it): the call ends on a timed-out try.
func TestChargedThenUnreachable_ChargeLandsLaterTriesTimeOut(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newRig(0, faults.Fault{Kind: faults.KindChargedThenUnreachable, Delay: faults.ChargedThenUnreachableDelay})
		try := func() result {
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
			defer cancel()
			return r.post(ctx, `"k-1"`, visa)
		}
		first := try()
		require.ErrorIs(t, first.err, context.DeadlineExceeded)
		second, third := try(), try()
		require.ErrorIs(t, second.err, context.DeadlineExceeded)
		require.ErrorIs(t, third.err, context.DeadlineExceeded)
		synctest.Wait()
		require.Len(t, r.prov.Charges(), 1, "the first try charged, once its 5 s passed")
		exs := exchanges(t, r.hist, 3)
		assert.Equal(t, "charged-then-unreachable "+faults.ChargedThenUnreachableDelay.String(), exs[0].Fault)
		assert.True(t, exs[0].ProviderDone)
		assert.Equal(t, http.StatusCreated, exs[0].ProviderStatus)
		assert.Equal(t, "timeout", exs[0].Err, "the client gave up before the charge landed")
		for _, e := range exs[1:] {
			assert.Equal(t, "outage", e.Fault)
			assert.False(t, e.Forwarded, "exchange %d", e.ID)
			assert.Equal(t, "timeout", e.Err, "exchange %d", e.ID)
		}
		assert.Equal(t, map[faults.Kind]int{faults.KindChargedThenUnreachable: 1, faults.KindOutage: 2}, r.tr.Injected())

		r.tr.Schedule(nil) // the next step: reachable again
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		defer cancel()
		got := r.post(ctx, `"k-1"`, visa)
		require.NoError(t, got.err)
		assert.Equal(t, http.StatusCreated, got.status, "the stored charge replayed")
		assert.Len(t, r.prov.Charges(), 1)
	})
}

// Slow-past-total: the key stays in flight past the client's 10 s total
// timeout; every retry within it meets 409, and the charge lands later.
func TestSlowPastTotal_InFlightPastTheCall(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newRig(0, faults.Fault{Kind: faults.KindSlowPastTotal, Delay: faults.SlowPastTotalDelay})
		start := time.Now()
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		first := r.post(ctx, `"k-1"`, visa)
		cancel()
		require.ErrorIs(t, first.err, context.DeadlineExceeded)
		for time.Since(start) < 10*time.Second {
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
			got := r.post(ctx, `"k-1"`, visa)
			cancel()
			require.NoError(t, got.err)
			assert.Equal(t, http.StatusConflict, got.status, "in flight at %v", time.Since(start))
			time.Sleep(time.Second)
		}
		assert.Empty(t, r.prov.Charges(), "still processing when the call's 10 s ended")
		time.Sleep(faults.SlowPastTotalDelay)
		synctest.Wait()
		assert.Len(t, r.prov.Charges(), 1)
	})
}

// Gen draws each macro in reach of a run: at least one in 200 faults.
func TestGen_DrawsTheMacros(t *testing.T) {
	seen := map[faults.Kind]int{}
	const n = 4000
	for i := range n {
		seen[faults.Gen().Example(i).Kind]++
	}
	for _, k := range []faults.Kind{faults.KindChargedThenUnreachable, faults.KindSlowPastTotal} {
		assert.Greater(t, seen[k], n/200, "kind %s drawn %d times in %d", k, seen[k], n)
	}
	plain := map[faults.Kind]int{}
	for i := range n {
		s := faults.PlainScheduleGen(1).Example(i)
		for _, f := range s {
			plain[f.Kind]++
		}
	}
	assert.Zero(t, plain[faults.KindChargedThenUnreachable], "no macro in real time")
	assert.Zero(t, plain[faults.KindSlowPastTotal], "no macro in real time")
}
