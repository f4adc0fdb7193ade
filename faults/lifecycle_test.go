package faults_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/idemcheck/idemcheck/faults"
)

// fakeLifecycle records the hooks run, beside the provider's arrivals and
// answers (the rig's handler writes them into the same log).
type fakeLifecycle struct {
	mu    sync.Mutex
	log   []string
	left  map[faults.Kind]int // Take's bound by kind
	taken int
}

func (f *fakeLifecycle) note(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, s)
}

func (f *fakeLifecycle) Take(k faults.Kind) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.left[k] == 0 {
		return false
	}
	f.left[k]--
	f.taken++
	return true
}
func (f *fakeLifecycle) Restart(context.Context) error   { f.note("restart"); return nil }
func (f *fakeLifecycle) StoreDown(context.Context) error { f.note("store-down"); return nil }
func (f *fakeLifecycle) StoreUp(context.Context) error   { f.note("store-up"); return nil }

// lifecycleRig is a rig whose provider processes for processing and
// notes each request's arrival and answer in lc's log.
func lifecycleRig(processing time.Duration, lc *fakeLifecycle, schedule ...faults.Fault) *rig {
	r := newRig(processing, schedule...)
	if lc != nil {
		r.tr.Lifecycle = lc
		prov := r.wire.Handler
		r.wire.Handler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			key := req.Header.Get("Idempotency-Key")
			lc.note("arrive " + key)
			prov.ServeHTTP(w, req)
			lc.note("answer " + key)
		})
	}
	return r
}

// A store outage runs the store-down hook before its request leaves and
// keeps the store down for the step: EndOutage runs store-up once, and a
// second outage drawn in the same step passes. A restart after the answer
// comes once the provider answered; one with a Delay while the request is
// in flight. The client sees both restarts' answers lost.
func TestLifecycleFaultsRunTheirHooksWhereDrawn(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		lc := &fakeLifecycle{left: map[faults.Kind]int{faults.KindStoreOutage: 2, faults.KindProviderRestart: 2}}
		r := lifecycleRig(time.Second, lc, faults.Fault{Kind: faults.KindStoreOutage}, faults.Fault{Kind: faults.KindStoreOutage}, faults.Fault{Kind: faults.KindPass})
		ctx := t.Context()
		assert.Equal(t, http.StatusCreated, r.post(ctx, `"k-1"`, visa).status)
		assert.Equal(t, http.StatusCreated, r.post(ctx, `"k-2"`, visa).status) // in process the store is not really down
		require.NoError(t, r.tr.EndOutage(ctx))
		require.NoError(t, r.tr.EndOutage(ctx), "no outage left: nothing to do")
		assert.Equal(t, []string{"store-down", `arrive "k-1"`, `answer "k-1"`, `arrive "k-2"`, `answer "k-2"`, "store-up"}, lc.log)
		assert.Equal(t, 1, r.tr.Injected()[faults.KindStoreOutage], "the second outage of the step passed")

		lc.log = nil
		r.tr.Schedule([]faults.Fault{{Kind: faults.KindProviderRestart}, {Kind: faults.KindProviderRestart, Delay: 300 * time.Millisecond}})
		after := r.post(ctx, `"k-3"`, visa)
		require.ErrorIs(t, after.err, faults.ErrInjected)
		assert.Contains(t, after.err.Error(), "the provider restarted")
		inflight := r.post(ctx, `"k-4"`, visa)
		require.ErrorIs(t, inflight.err, faults.ErrInjected)
		assert.Equal(t, []string{`arrive "k-3"`, `answer "k-3"`, "restart", `arrive "k-4"`, "restart", `answer "k-4"`}, lc.log)
		assert.Equal(t, 2, r.tr.Injected()[faults.KindProviderRestart])
		assert.Equal(t, "provider-restart after the answer", faults.Fault{Kind: faults.KindProviderRestart}.String())
		assert.Equal(t, "provider-restart 300ms into the request", faults.Fault{Kind: faults.KindProviderRestart, Delay: 300 * time.Millisecond}.String())
	})
}

// Without a Lifecycle, or once it takes no more (its bound reached, a
// hook broken), a lifecycle fault passes: nothing is injected and the
// history records pass.
func TestLifecycleFaultsPassWhenNotTaken(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		for _, lc := range []*fakeLifecycle{nil, {left: map[faults.Kind]int{}}} {
			r := lifecycleRig(0, lc, faults.Fault{Kind: faults.KindStoreOutage}, faults.Fault{Kind: faults.KindProviderRestart})
			ctx := t.Context()
			assert.Equal(t, http.StatusCreated, r.post(ctx, `"k-1"`, visa).status)
			assert.Equal(t, http.StatusCreated, r.post(ctx, `"k-2"`, visa).status)
			require.NoError(t, r.tr.EndOutage(ctx))
			assert.Empty(t, r.tr.Injected())
			for _, e := range exchanges(t, r.hist, 2) {
				assert.Equal(t, "pass", e.Fault)
			}
			if lc != nil {
				assert.Equal(t, []string{`arrive "k-1"`, `answer "k-1"`, `arrive "k-2"`, `answer "k-2"`}, lc.log, "no hook run")
			}
		}
	})
}

// LifecycleScheduleGen without hooks is PlainScheduleGen, draw for draw
// (the kill matrix's minima depend on them); with them it draws the
// lifecycle kinds it was given, and only those.
func TestLifecycleScheduleGen(t *testing.T) {
	assert.Same(t, faults.PlainScheduleGen(6), faults.LifecycleScheduleGen(6, false, false))
	seen := map[faults.Kind]int{}
	rapid.Check(t, func(t *rapid.T) {
		for _, f := range faults.LifecycleScheduleGen(6, true, false).Draw(t, "s") {
			seen[f.Kind]++
		}
	})
	assert.Positive(t, seen[faults.KindProviderRestart])
	assert.Zero(t, seen[faults.KindStoreOutage])
	seen = map[faults.Kind]int{}
	rapid.Check(t, func(t *rapid.T) {
		for _, f := range faults.LifecycleScheduleGen(6, true, true).Draw(t, "s") {
			seen[f.Kind]++
		}
	})
	assert.Positive(t, seen[faults.KindProviderRestart])
	assert.Positive(t, seen[faults.KindStoreOutage])
}
