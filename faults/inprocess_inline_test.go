package faults_test

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A client whose deadline is past the processing delay is served on its
// own goroutine (issue 29); the provider still lets a second request in
// while the first processes: it gets its 409 at once, and the first its
// 201 when processing ends.
func TestInProcess_InlineLetsOthersInWhileProcessing(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newRig(time.Second)
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		first := make(chan result, 1)
		go func() { first <- r.post(ctx, `"k"`, visa) }()
		synctest.Wait()
		time.Sleep(200 * time.Millisecond)
		second := r.post(t.Context(), `"k"`, visa)
		require.NoError(t, second.err)
		assert.Equal(t, http.StatusConflict, second.status)
		a := <-first
		require.NoError(t, a.err)
		assert.Equal(t, http.StatusCreated, a.status)
		assert.Equal(t, time.Second, a.at.Sub(start))
		assert.Len(t, r.prov.Charges(), 1)
	})
}

// A client whose deadline falls before processing ends gives up at its
// deadline, and the provider commits after it, as a real one does.
func TestInProcess_DeadlineBeforeProcessingEndsGivesUpOnTime(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newRig(time.Second)
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		a := r.post(ctx, `"k"`, visa)
		require.ErrorIs(t, a.err, context.DeadlineExceeded)
		assert.Equal(t, 300*time.Millisecond, a.at.Sub(start))
		assert.Empty(t, r.prov.Charges(), "not yet committed")
		time.Sleep(time.Second)
		assert.Len(t, r.prov.Charges(), 1, "committed after the client gave up")
	})
}

// A client served inline whose context is cancelled before its deadline
// (not by it) gets the cancellation, not the answer; it learns of it
// when processing ends, and the provider commits the charge.
func TestInProcess_InlineCancelledGetsTheError(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newRig(time.Second)
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		time.AfterFunc(400*time.Millisecond, cancel)
		a := r.post(ctx, `"k"`, visa)
		require.ErrorIs(t, a.err, context.Canceled)
		assert.Equal(t, time.Second, a.at.Sub(start))
		assert.Len(t, r.prov.Charges(), 1)
	})
}
