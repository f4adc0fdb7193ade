package faults_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/provider"
)

// A hang-up cancels the provider's request context while it processes; the
// client sees an injected error, and the reference provider still stores
// the charge, so the retry is its replay.
func TestHangUp_ProviderSeesCancellationAndStillStores(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		h := models.NewHistory()
		wire := &faults.InProcess{History: h, Processing: time.Second}
		var mu sync.Mutex
		var cancelled []bool
		prov := provider.New(provider.Config{BeforeCommit: func(r *http.Request) {
			wire.BeforeCommit(r)
			mu.Lock()
			cancelled = append(cancelled, r.Context().Err() != nil)
			mu.Unlock()
		}})
		wire.Handler = prov
		tr := faults.NewTransport(wire, h, []faults.Fault{{Kind: faults.KindHangUp}})
		r := &rig{hist: h, wire: wire, prov: prov, tr: tr, client: &http.Client{Transport: tr}}

		start := time.Now()
		first := r.post(t.Context(), `"k-1"`, visa)
		require.ErrorIs(t, first.err, faults.ErrInjected)
		assert.Zero(t, first.at.Sub(start), "the client hung up as processing started")
		time.Sleep(2 * time.Second) // virtual: the provider finishes
		synctest.Wait()
		retry := r.post(t.Context(), `"k-1"`, visa)
		require.NoError(t, retry.err)
		assert.Equal(t, http.StatusCreated, retry.status)
		assert.Equal(t, "true", retry.header.Get(models.ReplayedHeader), "the hung-up request's charge is replayed")
		assert.Len(t, r.prov.Charges(), 1)
		mu.Lock()
		assert.Equal(t, []bool{true}, cancelled, "the provider saw the hang-up; the replay did not process")
		mu.Unlock()
		exs := exchanges(t, h, 2)
		assert.Equal(t, "hang-up", exs[0].Fault)
		assert.True(t, exs[0].Forwarded && exs[0].ProviderDone, "the provider finished the hung-up request")
		assert.Equal(t, "the client hung up while the provider was processing", exs[0].Err)
		requireSpecAllows(t, exs)
	})
}

// Without a hang-up the provider never sees the client's cancellation:
// an attempt timeout leaves its context alive.
func TestHangUp_OtherFaultsStillStripCancellation(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		h := models.NewHistory()
		wire := &faults.InProcess{History: h, Processing: 5 * time.Second}
		var seen error
		done := make(chan struct{})
		prov := provider.New(provider.Config{BeforeCommit: func(r *http.Request) {
			wire.BeforeCommit(r)
			seen = r.Context().Err()
			close(done)
		}})
		wire.Handler = prov
		tr := faults.NewTransport(wire, h, nil)
		r := &rig{hist: h, wire: wire, prov: prov, tr: tr, client: &http.Client{Transport: tr}}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		res := r.post(ctx, `"k-1"`, visa)
		require.Error(t, res.err)
		<-done
		assert.NoError(t, seen)
	})
}

// An outage fails the request it is drawn for and every later request of
// the schedule, each on the client's own timeout, without reaching the
// provider; the next schedule ends it.
func TestOutage_LastsForTheRestOfTheSchedule(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newRig(0, faults.Fault{Kind: faults.KindPass}, faults.Fault{Kind: faults.KindOutage})
		ok := r.post(t.Context(), `"k-1"`, visa)
		require.NoError(t, ok.err)
		for i := range 3 {
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
			start := time.Now()
			res := r.post(ctx, `"k-2"`, visa)
			cancel()
			require.ErrorIs(t, res.err, context.DeadlineExceeded, "try %d", i)
			assert.Equal(t, 3*time.Second, res.at.Sub(start), "try %d waits for its timeout", i)
		}
		r.tr.Schedule(nil)
		after := r.post(t.Context(), `"k-2"`, visa)
		require.NoError(t, after.err)
		assert.Equal(t, http.StatusCreated, after.status)
		exs := exchanges(t, r.hist, 5)
		for _, e := range exs[1:4] {
			assert.Equal(t, "outage", e.Fault)
			assert.False(t, e.Forwarded)
			assert.Equal(t, "timeout", e.Err)
		}
		assert.Equal(t, map[faults.Kind]int{faults.KindOutage: 3}, r.tr.Injected())
	})
}
