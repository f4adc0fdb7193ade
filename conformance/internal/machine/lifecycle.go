package machine

import (
	"context"
	"fmt"
)

// Against a URL whose hooks are given (remote.Hooks), drawFaults also
// draws the provider's own failures (faults.LifecycleScheduleGen): a
// provider-restart while a create is in flight or between a create and
// its retry, and a store-outage from a request to the end of its step.
// The invariants judge the history as they judge the in-process
// provider-crash and store-down: a key is charged at most once
// (at-most-one-charge-per-order, books-balance), a completed key is
// replayed (replay-consistent, judged from the answers), and what the
// client settled agrees with the provider's truth once it is back.

// endOutage brings the provider's store back after a step a store-outage
// hit, once the step's calls returned (the store-up hook and the
// readiness wait, faults.Transport.EndOutage); nothing otherwise. It does
// not wait for the requests the client gave up on: a provider still
// working on one when its store comes back must not charge it (seed
// article 004; issue 26: a layer that held keyed requests and ran them
// once Redis was back charged twice). An error is a hook that failed or
// a provider not ready after it.
func (w *World) endOutage() error {
	if w.lifecycle == nil || w.faults == nil {
		return nil
	}
	if err := w.faults.EndOutage(context.Background()); err != nil {
		return fmt.Errorf("idemcheck: the store-outage fault could not bring the store back: %w", err)
	}
	return nil
}
