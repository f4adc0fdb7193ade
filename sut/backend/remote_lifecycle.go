package backend

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/retrypolicy"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// Bounds of the readiness wait after a lifecycle fault's hook: the
// preflight's find-by-reference, at most readyTries lookups 100 ms apart
// doubling to 2 s, within readyTimeout (as the certification's own
// readiness wait, certify.Options.ReadyTimeout).
const (
	readyTries   = 20
	readyTimeout = 30 * time.Second
)

// Lifecycle is r as a faults.Lifecycle: the provider's own hooks
// (remote.Hooks) run by the property's provider-restart and store-outage
// faults, at most remote.MaxRestartFaults and MaxOutageFaults of them
// in the run; nil when no hook is given, so that nothing is drawn.
func (r *Remote) Lifecycle() faults.Lifecycle {
	if !r.p.Config().Hooks.Any() {
		return nil
	}
	return remoteLifecycle{r}
}

// Draws reports which lifecycle faults r's hooks can apply: a restart
// (the restart hook), a store outage (both store hooks).
func (r *Remote) Draws() (restart, outage bool) {
	h := r.p.Config().Hooks
	return h.Restart != "", h.StoreDown != "" && h.StoreUp != ""
}

type remoteLifecycle struct{ r *Remote }

func (l remoteLifecycle) Take(k faults.Kind) bool {
	switch k {
	case faults.KindProviderRestart:
		return l.r.p.TakeHookFault("restart")
	case faults.KindStoreOutage:
		return l.r.p.TakeHookFault("store_down", "store_up")
	}
	return false
}

func (l remoteLifecycle) Restart(ctx context.Context) error {
	if err := l.r.p.RunHookFault(ctx, "restart"); err != nil {
		return err
	}
	return l.r.ready(ctx, "the restart")
}

func (l remoteLifecycle) StoreDown(ctx context.Context) error {
	return l.r.p.RunHookFault(ctx, "store_down")
}

func (l remoteLifecycle) StoreUp(ctx context.Context) error {
	if err := l.r.p.RunHookFault(ctx, "store_up"); err != nil {
		return err
	}
	return l.r.ready(ctx, "the store came back")
}

// ready waits until the provider answers the preflight's lookup again
// after a hook, at most readyTries lookups within readyTimeout; an
// answer the budget refused ends the wait without an error (the run
// stops on its budget).
func (r *Remote) ready(ctx context.Context, after string) error {
	ref := "idemcheck-" + r.p.RunID() + "-ready"
	retry := retrypolicy.NewBuilder[bool]().
		HandleIf(func(_ bool, err error) bool { return err != nil && !errors.Is(err, remote.ErrBudget) }).
		WithMaxAttempts(readyTries).
		WithBackoff(100*time.Millisecond, 2*time.Second).
		WithMaxDuration(readyTimeout).
		ReturnLastFailure().
		Build()
	_, err := failsafe.With[bool](retry).WithContext(ctx).Get(func() (bool, error) {
		_, err := find(r.p, ref)
		return err == nil, err
	})
	if err != nil && !errors.Is(err, remote.ErrBudget) {
		return fmt.Errorf("the provider was not ready within %s after %s: %w", readyTimeout, after, err)
	}
	return nil
}
