// Package stackgrow grows a new goroutine's stack once, at its start, to the
// size its deep work will need.
//
// A goroutine starts with a small stack (the runtime's adaptive start is the
// average over all goroutines, most of them shallow) and doubles it each
// time a call runs out, copying the whole stack every time. A check of the
// property and an in-process exchange each start a goroutine whose calls
// (rapid, the client's failsafe-go pipeline, encoding/json, the provider)
// reach 32–64 KB: growing step by step cost 10 % of BenchmarkProperty's CPU
// (runtime.copystack, issue 29). One large frame at the start makes the
// runtime grow the stack once, while it is still shallow and cheap to copy.
package stackgrow

// Frame sizes: what a check's goroutine and an exchange's handler
// goroutine reach in BenchmarkProperty (runtime.copystack left under 1 %).
const (
	Check    = 64 << 10
	Exchange = 16 << 10
)

// To grows the calling goroutine's stack so that about n bytes (Check or
// Exchange) are free below the caller without another copy.
func To(n int) {
	if n > Check {
		grow64(n)
		return
	}
	switch {
	case n > 32<<10:
		grow64(n)
	case n > 16<<10:
		grow32(n)
	default:
		grow16(n)
	}
}

// Each growN holds a frame of N bytes; the index read keeps the compiler
// from dropping the array, and go:noinline keeps the frame its own.

//go:noinline
func grow64(n int) byte {
	var b [64 << 10]byte
	b[n%len(b)] = 1
	return b[(n/2)%len(b)]
}

//go:noinline
func grow32(n int) byte {
	var b [32 << 10]byte
	b[n%len(b)] = 1
	return b[(n/2)%len(b)]
}

//go:noinline
func grow16(n int) byte {
	var b [16 << 10]byte
	b[n%len(b)] = 1
	return b[(n/2)%len(b)]
}
