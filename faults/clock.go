package faults

import (
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
