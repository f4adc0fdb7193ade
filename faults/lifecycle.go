package faults

import "context"

// Lifecycle is what a Transport needs to apply the provider's own
// lifecycle faults (KindProviderRestart, KindStoreOutage) to a provider in
// another process: the hooks its team already has (sut/remote.Hooks:
// --hook-restart, --hook-store-down, --hook-store-up), run bounded in
// time, with a readiness wait after a restart and after the store is
// back. Set Transport.Lifecycle to draw them; without it they pass.
type Lifecycle interface {
	// Take reserves one run of kind k's hooks and reports whether it may
	// run: its hooks are given, none of them failed, and the run's bound
	// of lifecycle faults (sut/remote.MaxRestartFaults,
	// MaxOutageFaults) is not reached. A fault that is not taken passes.
	Take(k Kind) bool
	// Restart runs the restart hook, then waits until the provider
	// answers again.
	Restart(ctx context.Context) error
	// StoreDown runs the store-down hook; StoreUp the store-up hook, then
	// waits until the provider answers again.
	StoreDown(ctx context.Context) error
	StoreUp(ctx context.Context) error
}

// lifecycleKey carries the Transport of a request drawn with a lifecycle
// fault to its kind's apply.
type lifecycleKey struct{}

func lifecycleFrom(ctx context.Context) *Transport {
	t, _ := ctx.Value(lifecycleKey{}).(*Transport)
	return t
}

// isLifecycle reports whether k is applied through a Lifecycle.
func isLifecycle(k Kind) bool { return k == KindProviderRestart || k == KindStoreOutage }

// takeLifecycle is begin's decision for a lifecycle fault f (t.mu held):
// f itself when t can apply it now, else pass. A store outage already in
// force this step, or a restart during one, passes: the store is down
// once per step, and a provider is not restarted without its store.
func (t *Transport) takeLifecycle(f Fault) Fault {
	if t.Lifecycle == nil || t.storeDown || !t.Lifecycle.Take(f.Kind) {
		return Fault{Kind: KindPass}
	}
	if f.Kind == KindStoreOutage {
		t.storeDown = true // from now on; StoreUp ends it with the step
	}
	return f
}

// EndOutage brings the store back after a step a KindStoreOutage hit
// (Lifecycle.StoreUp: the store-up hook and the readiness wait); nothing
// without one. The machine calls it when the step's requests are done,
// before the step is judged.
func (t *Transport) EndOutage(ctx context.Context) error {
	t.mu.Lock()
	down := t.storeDown
	t.storeDown = false
	t.mu.Unlock()
	if !down {
		return nil
	}
	return t.Lifecycle.StoreUp(ctx)
}
