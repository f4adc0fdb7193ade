package faults

import (
	"time"

	"pgregory.net/rapid"
)

// Offsets keep drawn durations off the round values that timeouts and
// retry delays use (3 s, 10 s, 1 s), so two timers never fire at the same
// virtual instant and a drawn sequence replays in one order.
const (
	delayOffset = 313 * time.Microsecond
	slowOffset  = 617 * time.Microsecond
)

// generated lists the kinds Gen draws, in shrinking order: rapid shrinks a
// drawn index toward 0, so a shrunk schedule prefers the first kinds.
var generated = []Kind{
	KindStatus503, KindStatus500, KindReset, KindLoseResponse, KindDropRequest,
	KindSlowProcessing, KindDelay, KindStatus429,
}

// Gen draws one fault: about half the time pass, otherwise one of the
// kinds with its parameters (delays up to 5 s, slow processing up to 20 s,
// Retry-After 1–3 s). It shrinks toward pass.
func Gen() *rapid.Generator[Fault] {
	return rapid.Custom(func(t *rapid.T) Fault {
		if rapid.IntRange(0, 9).Draw(t, "faulty") < 5 {
			return Fault{Kind: KindPass}
		}
		k := generated[rapid.IntRange(0, len(generated)-1).Draw(t, "kind")]
		f := Fault{Kind: k}
		switch k {
		case KindDelay:
			f.Delay = time.Duration(rapid.IntRange(1, 5000).Draw(t, "delay_ms"))*time.Millisecond + delayOffset
		case KindSlowProcessing:
			f.Delay = time.Duration(rapid.IntRange(1, 20000).Draw(t, "slow_ms"))*time.Millisecond + slowOffset
		case KindStatus429:
			f.RetryAfter = rapid.IntRange(1, 3).Draw(t, "retry_after_s")
		}
		return f
	})
}

// ScheduleGen draws a fault schedule of at most maxLen entries: entry n is
// what happens to the n-th request on the wire; later requests pass.
// Shrinking removes entries and turns the rest into pass.
func ScheduleGen(maxLen int) *rapid.Generator[[]Fault] {
	return rapid.SliceOfN(Gen(), 0, maxLen)
}
