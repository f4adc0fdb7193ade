package certify

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/retrypolicy"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// The lifecycle requirement ids (issue 26): faults of the provider itself,
// caused through the hooks its team already has (remote.Hooks).
const (
	ReqSlowCreate     = "slow-create-retry-charges-once"
	ReqRestartHeld    = "restart-releases-held-key"
	ReqRestartOnce    = "restart-never-charges-twice"
	ReqOutageRefused  = "store-outage-refused"
	ReqOutageReplayed = "store-outage-replay-consistent"
)

// lifecycleRequirements are the requirements of a provider's own
// failures: a handler slower than its lock, a restart, a store outage.
// Each needs what it tests published or given (the profile's
// lifecycle.lease, a hook) and is NOT JUDGED without it, so a run without
// hooks is as it was. Their creates' 5xx and missing answers are their
// evidence, not a transient no-verdict (Requirement.ownVerdicts).
func lifecycleRequirements() []Requirement {
	return []Requirement{
		{ID: ReqSlowCreate, Level: reports.LevelMust, Title: "Retries with the same key sent while a slow create is still in flight (after 20 ms, then doubling) are answered 409 and charge nothing: the in-flight lock outlives the handler (needs lifecycle.lease published).",
			Source: "draft-ietf-httpapi-idempotency-key-header §2.6 (409 while in flight); seed article 004 (a lock with a lease of its own, longer than the work it guards)", against: draft,
			cost: cost{slowRetries + 2, slowRetries + 1}, check: checkSlowCreate, ownVerdicts: true},
		{ID: ReqRestartHeld, Level: reports.LevelProfile, Title: "A restart while a create is in flight leaves its key held (409) no longer than the profile's published lease, and the key then charges at most once (needs --hook-restart and lifecycle.lease).",
			Source: "profile: lifecycle.lease; seed article 004 (a dead worker's lock must expire)", against: profile,
			cost: cost{heldPolls + readyTries + 2, heldPolls + 1}, check: checkRestartHeld, ownVerdicts: true},
		{ID: ReqRestartOnce, Level: reports.LevelMust, Title: "A key completed before a restart is replayed after it (same status and body) and never charged twice (needs --hook-restart).",
			Source: "draft-ietf-httpapi-idempotency-key-header §2 (a key is kept for the retention window), §2.6; profile: lifecycle.restart_keeps", against: draft,
			cost: cost{maxTriesCost + readyTries + 2, maxTriesCost + 1}, check: checkRestartOnce, ownVerdicts: true},
		{ID: ReqOutageRefused, Level: reports.LevelMust, Title: "A create sent while the idempotency store is down is refused with 503 and Retry-After and processes nothing, even when the store comes back while it runs; its retry after the store is back charges once (needs --hook-store-down and --hook-store-up).",
			Source: "docs/provider-api.md (503, Retry-After: nothing was charged); seed article 004 (a store error is not a cache miss)", against: draft,
			cost: cost{maxTriesCost + readyTries + 3, maxTriesCost + 2}, check: checkOutageRefused, ownVerdicts: true},
		{ID: ReqOutageReplayed, Level: reports.LevelMust, Title: "A key completed before a store outage is replayed after the store is back (same status and body) and never charged twice (needs --hook-store-down and --hook-store-up).",
			Source: "draft-ietf-httpapi-idempotency-key-header §2.6; seed article 004 (the store holds the keys)", against: draft,
			cost: cost{maxTriesCost + readyTries + 3, maxTriesCost + 2}, check: checkOutageReplayed, ownVerdicts: true},
	}
}

// Bounds of the lifecycle requirements' request loops.
const (
	slowRetries = 8  // retries while a slow create is in flight: 20 ms, 40 ms, … 2.56 s after one another
	heldPolls   = 12 // retries of a key held after a restart, spread over lease + margin
	readyTries  = 20 // readiness lookups after a hook
)

// lifecycle is what a run keeps of its hooks: each run, and the hooks
// that failed (a hook that timed out is not run again).
type lifecycle struct {
	mu     sync.Mutex // guards runs, broken
	runs   []reports.HookRun
	broken map[string]string
}

// hook runs the hook name (restart, store_down, store_up) for the
// requirement req; an error says why it could not be used.
func (r *runner) hook(req, name string) error {
	h := r.p.Config().Hooks
	cmd := map[string]string{"restart": h.Restart, "store_down": h.StoreDown, "store_up": h.StoreUp}[name]
	r.life.mu.Lock()
	why := r.life.broken[name]
	r.life.mu.Unlock()
	if why != "" {
		return fmt.Errorf("hook %s %s earlier in this run; not run again", name, why)
	}
	run, err := remote.RunHook(r.ctx, name, cmd, time.Duration(h.Timeout))
	run.For = req
	r.life.mu.Lock()
	defer r.life.mu.Unlock()
	r.life.runs = append(r.life.runs, run)
	if err != nil && strings.HasPrefix(run.Error, "timed out") {
		if r.life.broken == nil {
			r.life.broken = map[string]string{}
		}
		r.life.broken[name] = run.Error
	}
	return err
}

// ready waits until the provider answers a find-by-reference again (the
// preflight's lookup), after a hook: at most Options.ReadyTimeout and
// readyTries lookups, 100 ms apart doubling to 2 s.
func (r *runner) ready(after string) error {
	ref := "idemcheck-" + r.p.RunID() + "-ready"
	retry := retrypolicy.NewBuilder[bool]().
		HandleIf(func(_ bool, err error) bool { return err != nil && !errors.Is(err, errBudget) }).
		WithMaxAttempts(readyTries).
		WithBackoff(100*time.Millisecond, 2*time.Second).
		WithMaxDuration(r.opts.ReadyTimeout).
		ReturnLastFailure().
		Build()
	_, err := failsafe.With[bool](retry).WithContext(r.ctx).Get(func() (bool, error) {
		_, err := r.find(ref)
		return err == nil, err
	})
	if err != nil && !errors.Is(err, errBudget) {
		return fmt.Errorf("the provider was not ready within %s after %s: %w", r.opts.ReadyTimeout, after, err)
	}
	return err
}

// needs says why a lifecycle requirement cannot run (NOT JUDGED), or "".
func (r *runner) needs(hooks ...string) string {
	h := r.p.Config().Hooks
	given := map[string]bool{"restart": h.Restart != "", "store_down": h.StoreDown != "", "store_up": h.StoreUp != ""}
	var missing []string
	for _, n := range hooks {
		if !given[n] {
			missing = append(missing, "--hook-"+strings.ReplaceAll(n, "_", "-"))
		}
	}
	if len(missing) > 0 {
		return "no " + strings.Join(missing, " or ") + " given (profile lifecycle.hooks, IDEMCHECK_HOOK_*): docs/providers.md, \"Lifecycle hooks\""
	}
	return ""
}

// lease is the profile's published lease, 0 for none.
func (r *runner) lease() time.Duration { return time.Duration(r.p.Profile().Lifecycle.Lease) }

// inflight is a create sent in the background.
type inflight struct {
	sent time.Time
	done chan struct{}
	a    answer
	err  error
	took time.Duration
}

func (r *runner) postAsync(key string, body models.ChargeRequest) *inflight {
	f := &inflight{sent: time.Now(), done: make(chan struct{})}
	go func() {
		defer close(f.done)
		f.a, f.err = r.post(key, body)
		f.took = time.Since(f.sent)
	}()
	return f
}

// answered reports whether f has its answer.
func (f *inflight) answered() bool {
	select {
	case <-f.done:
		return true
	default:
		return false
	}
}

// within waits for f's answer at most d; it reports whether it came.
func (f *inflight) within(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-f.done:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// charged counts the charges under ref, with a reason when the lookup
// failed.
func (r *runner) charged(ref string) ([]models.Charge, error) {
	list, err := r.find(ref)
	if err != nil && !errors.Is(err, errBudget) {
		return nil, fmt.Errorf("the lookup by reference afterwards failed: %w", err)
	}
	return list, err
}

// afterwards settles key's request once more (the retry after the fault)
// and lists the charges under its reference.
func (r *runner) afterwards(key string, body models.ChargeRequest) (answer, []models.Charge, error) {
	again, _, err := r.settle(key, body)
	if err != nil {
		return again, nil, err
	}
	list, err := r.charged(body.MerchantReference)
	return again, list, err
}

// chargeIDs lists the charges' ids for a reason.
func chargeIDs(list []models.Charge) string {
	ids := make([]string, len(list))
	for i, c := range list {
		ids[i] = c.ID
	}
	return strings.Join(ids, ", ")
}

// refusedInOutage judges an answer to a create sent while the store was down:
// "" for 503 with Retry-After, else why not.
func refusedInOutage(a answer) string {
	switch {
	case a.err != nil:
		return "got no answer (" + a.cause() + "): the provider did not survive its store's outage"
	case a.status >= 200 && a.status < 300:
		return fmt.Sprintf("was processed (%s)", a.short())
	case a.status != http.StatusServiceUnavailable:
		return fmt.Sprintf("was answered %s, not 503 with Retry-After", a.short())
	case a.header.Get("Retry-After") == "":
		return "was answered 503 without Retry-After"
	}
	return ""
}

// The lifecycle requirements guard against a second charge (severityOf in
// causes.go): their FAIL with one charge per reference is a status-only
// cause (a 500 without Retry-After), with two a charge twice. A key held
// past its lease blocks a payment (the default, LosesPayment).
func init() {
	for _, id := range []string{ReqSlowCreate, ReqRestartOnce, ReqOutageRefused, ReqOutageReplayed} {
		severityOf[id] = reports.ChargesTwice
	}
}
