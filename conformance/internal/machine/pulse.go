package machine

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// Pulse is the progress of one check in its virtual-time bubble, beaten
// by the machine at each step and phase and read from outside the bubble
// by the run's stall watch (run/stall.go): a bubble whose clock cannot
// advance — a goroutine of the client blocked on a sync.Mutex, a channel
// made outside the bubble or real I/O is not durably blocked, so synctest
// neither advances time nor reports a deadlock — stops beating. It is
// safe for concurrent use; a nil *Pulse ignores its beats.
type Pulse struct {
	beats     atomic.Uint64
	abandoned atomic.Bool
	mu        sync.Mutex // guards step, action, args
	step      int        // 0: not a drawn step (the start, the final phase)
	action    string
	args      string
}

// Beat records that the check reached step n (0 for a phase that is not
// a drawn step), doing action with args.
func (p *Pulse) Beat(n int, action, args string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.step, p.action, p.args = n, action, args
	p.mu.Unlock()
	p.beats.Add(1)
}

// Beats is how many beats the check has made.
func (p *Pulse) Beats() uint64 { return p.beats.Load() }

// Where is the last step or phase the check reached, as a report names
// it: "step 3 (double-click: order 1 with visa, …)".
func (p *Pulse) Where() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	what := p.action
	if p.args != "" {
		what += ": " + p.args
	}
	if p.step == 0 {
		return what
	}
	return fmt.Sprintf("step %d (%s)", p.step, what)
}

// Abandon tells the check that the run gave up waiting for it: should it
// ever resume, it ends without a verdict.
func (p *Pulse) Abandon() { p.abandoned.Store(true) }

// Abandoned reports whether the run gave up waiting for the check.
func (p *Pulse) Abandoned() bool { return p != nil && p.abandoned.Load() }
