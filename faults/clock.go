package faults

import (
	"sync"
	"testing/synctest"
	"time"
)

// Clock is the one time source shared by the client, the provider, the
// faults and reconciliation in a run.
type Clock interface {
	// Now is the current time.
	Now() time.Time
	// Advance lets d pass: every timer due within d fires, in order.
	Advance(d time.Duration)
	// Settle returns once everything due at the current instant has run,
	// so that what is read next does not depend on goroutine scheduling.
	Settle()
}

// VirtualClock is the clock of a testing/synctest bubble (rapid.SyncTest):
// time.Now is virtual there and starts at 2000-01-01 00:00 UTC, and time
// moves only when every goroutine in the bubble is blocked, so a 30-minute
// AbandonAfter costs microseconds. Use it only inside a bubble.
type VirtualClock struct{}

// Now is the bubble's virtual time.
func (VirtualClock) Now() time.Time { return time.Now() }

// Advance moves virtual time forward by d: the calling goroutine sleeps,
// and the bubble runs every other goroutine's timers due before it wakes.
// This is how a step says "ten minutes pass", not a wait for something.
func (VirtualClock) Advance(d time.Duration) { time.Sleep(d) }

// Settle waits until every other goroutine of the bubble is durably
// blocked (synctest.Wait): all work due at this virtual instant is done.
func (VirtualClock) Settle() { synctest.Wait() }

// OffsetClock is the clock of a run against a provider in real time (a
// WireMock server, a sandbox): Now is the wall clock plus an offset, and
// Advance moves the offset without waiting. The client's attempt and total
// timeouts run on real time (scaled down by configuration); its
// reconciliation ages (MinAge 2m, AbandonAfter 30m) and the provider's
// retention are judged on Now, so "22 hours pass" costs nothing. It is safe
// for concurrent use.
type OffsetClock struct {
	mu     sync.Mutex // guards offset
	offset time.Duration
}

// Now is the wall clock plus every Advance so far.
func (c *OffsetClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

// Advance lets d pass at once, for everything that reads Now.
func (c *OffsetClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

// Settle does nothing: in real time there is no instant to settle; what a
// step started, the step itself waits for.
func (c *OffsetClock) Settle() {}
