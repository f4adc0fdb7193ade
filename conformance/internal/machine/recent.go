package machine

import (
	"time"

	"github.com/idemcheck/idemcheck/models"
)

// recentView calls f with the history as it is now: read it in f, keep
// nothing of it after f returns (the next call overwrites it in place),
// and do not call recentView from f. Safe for concurrent use.
func (w *World) recentView(f func(h models.Snapshot)) {
	w.recentMu.Lock()
	defer w.recentMu.Unlock()
	w.hist.Sync(&w.recent)
	f(w.recent)
}

// keyHeld is heldAtProvider over the history as it is now.
func (w *World) keyHeld(key string, since time.Time) (held bool) {
	w.recentView(func(h models.Snapshot) { held = heldAtProvider(h.Exchanges, key, since) })
	return held
}
