package machine

import "context"

// awaitLookupLag, against a URL whose profile publishes a lookup lag,
// lets the provider answer what is in flight and then lets the lag pass
// when a create was forwarded since the last wait (remote.LagGate, whose
// comment says why): before a reconciliation, and before the provider's
// charges are read. Elsewhere it returns at once.
func (w *World) awaitLookupLag() {
	if w.lagGate == nil {
		return
	}
	w.clock.Advance(0) // against a URL: waits for every request still at the provider
	_ = w.lagGate.Wait(context.Background())
}
