package remote

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// The property's lifecycle faults per certification (faults.
// KindProviderRestart, KindStoreOutage, drawn when their hooks are
// given): a restart is slow (docker compose restart takes seconds, the
// readiness wait follows), so a run applies at most MaxRestartFaults
// restarts and MaxOutageFaults store outages, all sequences and lanes
// together; later draws pass. Their time is wall time, so it counts in
// the duration budget (Limits.MaxDuration).
const (
	MaxRestartFaults = 3
	MaxOutageFaults  = 3
)

// HookFaultFor is the For of a hook run by the property (HookRun.For),
// beside the requirement ids of the certification's own runs.
const HookFaultFor = "property"

// hookFaults is what a provider keeps of the property's hook runs,
// shared with Account2.
type hookFaults struct {
	mu     sync.Mutex // guards used, broken, runs
	used   map[string]int
	broken map[string]string // hook name → why it is not run again
	runs   []HookRun
}

// TakeHookFault reserves one of the run's lifecycle faults that need the
// hooks named (restart; store_down and store_up): false when one is not
// given, failed earlier in the run, or the bound of the first one's kind
// (MaxRestartFaults for restart, MaxOutageFaults otherwise) is reached.
func (p *Provider) TakeHookFault(names ...string) bool {
	h := p.cfg.Hooks
	cmd := map[string]string{"restart": h.Restart, "store_down": h.StoreDown, "store_up": h.StoreUp}
	hf := p.hooks
	hf.mu.Lock()
	defer hf.mu.Unlock()
	for _, n := range names {
		if cmd[n] == "" || hf.broken[n] != "" {
			return false
		}
	}
	limit := MaxOutageFaults
	if names[0] == "restart" {
		limit = MaxRestartFaults
	}
	if hf.used[names[0]] >= limit {
		return false
	}
	if hf.used == nil {
		hf.used = map[string]int{}
	}
	hf.used[names[0]]++
	return true
}

// RunHookFault runs hook name (restart, store_down, store_up) for the
// property: RunHook with the hook's timeout, cut at the run's deadline
// (Meter.Deadline), kept for HookFaultRuns. A hook that fails is not
// run again in this run (TakeHookFault says no).
func (p *Provider) RunHookFault(ctx context.Context, name string) error {
	h := p.cfg.Hooks
	cmd := map[string]string{"restart": h.Restart, "store_down": h.StoreDown, "store_up": h.StoreUp}[name]
	timeout := time.Duration(h.Timeout)
	if timeout <= 0 {
		timeout = DefaultHookTimeout
	}
	left := time.Until(p.meter.Deadline())
	if left <= 0 {
		return errors.New("hook " + name + ": the run's duration budget is spent")
	}
	run, err := RunHook(ctx, name, cmd, min(timeout, left))
	run.For = HookFaultFor
	hf := p.hooks
	hf.mu.Lock()
	defer hf.mu.Unlock()
	hf.runs = append(hf.runs, run)
	if err != nil {
		if hf.broken == nil {
			hf.broken = map[string]string{}
		}
		hf.broken[name] = run.Error
		return fmt.Errorf("%w; not run again in this run", err)
	}
	return nil
}

// HookFaultRuns is every hook run of the property so far, in order.
func (p *Provider) HookFaultRuns() []HookRun {
	hf := p.hooks
	hf.mu.Lock()
	defer hf.mu.Unlock()
	return append([]HookRun(nil), hf.runs...)
}
