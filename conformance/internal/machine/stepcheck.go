package machine

import (
	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/sut/backend"
)

// stepVerdict is the verdict on w after a step: the sequence's
// check.Checker judges only what the step added, with the same first
// violation check.Evaluate would name (checker_agree_test.go holds it to
// that). Over a journaled backend (WireMock), whose Amend rewrites what
// earlier exchanges say was sent, every step is judged whole.
func (m *Machine) stepVerdict(w check.World, invs []check.Invariant) *check.ViolationError {
	if _, ok := m.w.prov.(backend.Journaled); ok {
		return check.Evaluate(w, invs)
	}
	if m.w.checker == nil {
		m.w.checker = check.NewChecker(invs)
	}
	v := m.w.checker.Step(w)
	if h := StepHook; h != nil {
		h(w, invs, v)
	}
	if h := ViewHook; h != nil && w.State != nil {
		full, err := m.w.Snapshot()
		if err == nil {
			h(w, full)
		}
	}
	return v
}

// ViewHook, set by a test (conformance's checker_agree_test.go), sees
// every step's world whose state was kept from the client store's change
// log (stateView) beside a full read of it (World.Snapshot); nil
// otherwise.
var ViewHook func(step, full check.World)

// StepHook, set by a test (conformance's checker_agree_test.go), sees
// every step's world, invariants and incremental verdict; nil otherwise.
var StepHook func(w check.World, invs []check.Invariant, got *check.ViolationError)
