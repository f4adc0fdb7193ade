package machine

import (
	"context"
	"fmt"
	"time"

	"github.com/idemcheck/idemcheck/checkout"
	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/internal/stackgrow"
)

// ClientAPI names the failure of a client under test that breaks its own
// contract (package checkout, docs/client-api.md) rather than an
// invariant: a call that panicked, did not return within its bound, or
// answered something that is not one of the four outcomes. The run fails
// on it, with a report, like on an invariant.
const ClientAPI = "client-api"

// callBound is how long past the client's TotalTimeout a checkout or a
// reconciliation may take before the harness stops waiting for it.
const callBound = time.Minute

// guarded runs one call of the client under test: a panic, an Err, or an
// outcome outside the contract is a breach (recorded, and judged after the
// step as ClientAPI); the Result then reads Failed to the history. A call
// that does not return within TotalTimeout + callBound is a breach too,
// and is left running.
func (w *World) guarded(what string, call func() checkout.Result) checkout.Result {
	if w.cfg.Under == nil {
		// The reference client (its mutants too) is ours and bounded by
		// its own TotalTimeout (failsafe-go's timeout and retry policies),
		// so it runs on the step's goroutine: no goroutine, timer and
		// hand-off per call (issue 29). A panic is still a breach.
		return w.judgeCall(what, w.callInline(what, call))
	}
	done := make(chan checkout.Result, 1)
	go func() {
		stackgrow.To(stackgrow.Check)
		defer func() {
			if p := recover(); p != nil {
				done <- checkout.Result{Outcome: checkout.Failed, Err: fmt.Errorf("%s panicked", what)}
			}
		}()
		done <- call()
	}()
	var res checkout.Result
	timer := time.NewTimer(w.ccfg.TotalTimeout + w.scale(callBound))
	defer timer.Stop()
	select {
	case res = <-done:
	case <-timer.C:
		res = checkout.Result{Outcome: checkout.Failed, Err: fmt.Errorf("%s did not return within %v", what, w.ccfg.TotalTimeout+w.scale(callBound))}
		w.mu.Lock()
		w.hung = append(w.hung, done)
		w.mu.Unlock()
	}
	return w.judgeCall(what, res)
}

// callInline is call on this goroutine, a panic turned into a Failed
// result as guarded's goroutine does.
func (w *World) callInline(what string, call func() checkout.Result) (res checkout.Result) {
	defer func() {
		if p := recover(); p != nil {
			res = checkout.Result{Outcome: checkout.Failed, Err: fmt.Errorf("%s panicked", what)}
		}
	}()
	return call()
}

// judgeCall holds a call's result to the contract: an outcome outside it
// or an Err is a breach, and reads Failed.
func (w *World) judgeCall(what string, res checkout.Result) checkout.Result {
	switch res.Outcome {
	case checkout.Paid, checkout.Pending, checkout.Declined, checkout.Failed:
	default:
		if res.Err == nil {
			res.Err = fmt.Errorf("%s answered %q, not one of Paid, PaymentPending, Declined, Failed", what, res.Outcome)
		}
	}
	if res.Err != nil {
		w.breach(res.Err)
		res.Outcome = checkout.Failed
	}
	return res
}

// reconcileGuarded is Reconcile under the same guard.
func (w *World) reconcileGuarded(ctx context.Context, cli checkout.Client) string {
	var said string
	res := w.guarded("a reconciliation", func() checkout.Result {
		s, err := cli.Reconcile(ctx)
		said = s
		return checkout.Result{Outcome: checkout.Paid, Err: err}
	})
	if res.Err != nil {
		return "error: " + res.Err.Error()
	}
	return said
}

// hangBound is how long, past the end of a sequence, the harness waits for
// calls of the client under test that did not return within their bound:
// on virtual time a bubble's clock stops when its main goroutine exits, so
// a call still sleeping then is reported by synctest as a deadlock.
const hangBound = 48 * time.Hour

// drainHung waits, at most hangBound, for the calls that outlived their
// bound. A call blocked on anything but time (a channel never closed) is
// still left behind, and synctest then reports it: give the client's
// blocking calls the context it is handed.
func (w *World) drainHung() {
	w.mu.Lock()
	hung := w.hung
	w.hung = nil
	w.mu.Unlock()
	if len(hung) == 0 {
		return
	}
	timer := time.NewTimer(hangBound)
	defer timer.Stop()
	for _, done := range hung {
		select {
		case <-done:
		case <-timer.C:
			return
		}
	}
}

// breach keeps the first broken contract of the sequence.
func (w *World) breach(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.broke == nil {
		w.broke = err
	}
}

// contractViolation is the first broken contract as a violation, or nil.
func (w *World) contractViolation() *check.ViolationError {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.broke == nil {
		return nil
	}
	msg := ClientAPI + ": " + w.broke.Error()
	return &check.ViolationError{Invariant: ClientAPI, Message: msg, Category: msg}
}
