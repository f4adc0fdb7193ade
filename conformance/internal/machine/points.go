package machine

import (
	"context"
	"sync"

	"github.com/idemcheck/idemcheck/sut/client"
)

// pointHooks holds the one-shot actions armed at the clients' crash points
// (client.Config.At): the harness kills a client at one, or runs another
// actor's work between a reconciler's read and its write. Safe for
// concurrent use.
type pointHooks struct {
	mu    sync.Mutex // guards armed
	armed map[client.Point]func()
}

// arm sets f to run the next time any client reaches p, once.
func (h *pointHooks) arm(p client.Point, f func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.armed == nil {
		h.armed = map[client.Point]func(){}
	}
	h.armed[p] = f
}

// disarm removes whatever is armed at p and reports whether it had fired.
func (h *pointHooks) disarm(p client.Point) (fired bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, pending := h.armed[p]
	delete(h.armed, p)
	return !pending
}

// at is client.Config.At: it runs and removes what is armed at p, outside
// the lock (the action may itself pass crash points).
func (h *pointHooks) at(_ context.Context, p client.Point) {
	h.mu.Lock()
	f := h.armed[p]
	delete(h.armed, p)
	h.mu.Unlock()
	if f != nil {
		f()
	}
}
