package conformance

import (
	"time"

	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// The invariants live in package check (conformance/check): pure
// functions over package models. Their names and types stay reachable here,
// as part of this package's public surface.

// The invariant names of DESIGN.md (check's constants).
const (
	OneKeyPerIntent          = check.OneKeyPerIntent
	AtMostOneChargePerOrder  = check.AtMostOneChargePerOrder
	ConflictNeverFinal       = check.ConflictNeverFinal
	NoUnsafeRetry            = check.NoUnsafeRetry
	KeyFormat                = check.KeyFormat
	ReplayConsistent         = check.ReplayConsistent
	MismatchRejected         = check.MismatchRejected
	BooksBalance             = check.BooksBalance
	ReconciliationConverges  = check.ReconciliationConverges
	EquivalentRequestsAgree  = check.EquivalentRequestsAgree
	KeyScopedPerAccount      = check.KeyScopedPerAccount
	AtMostOneRefundPerIntent = check.AtMostOneRefundPerIntent
	KeyScopedPerEndpoint     = check.KeyScopedPerEndpoint
	NoStaleKey               = check.NoStaleKey
)

// World is what an invariant reads (check.World).
type World = check.World

// Finding is what an invariant check found (check.Finding).
type Finding = check.Finding

// Invariant is one named check over a World (check.Invariant).
type Invariant = check.Invariant

// ViolationError is a broken invariant (check.ViolationError).
type ViolationError = check.ViolationError

// ErrViolation is the sentinel every *ViolationError wraps (check.ErrViolation).
var ErrViolation = check.ErrViolation

// Safety lists the safety invariants in the order they are checked
// (check.Safety).
func Safety() []Invariant { return check.Safety() }

// Liveness lists the invariants checked once faults heal (check.Liveness).
func Liveness() []Invariant { return check.Liveness() }

// violation is check.Violation: the Finding of invariant name.
var violation = check.Violation

// evaluate is the whole-history verdict (check.Evaluate).
var evaluate = check.Evaluate

// remoteJudged reports whether the remote provider-only invariants can be
// judged against p (check.RemoteSafety assumes no key expires during the
// run), and why not.
func remoteJudged(p *remote.Provider) (ok bool, why string) {
	window, run := time.Duration(p.Profile().RetentionWindow), p.Config().Limits.MaxDuration
	if window > 0 && run > 0 && window < run {
		return false, "a provider-only invariant; the profile's retention window (" + window.String() + ") is shorter than the run (" + run.String() + "), so a key may expire mid-run and be processed again"
	}
	return true, ""
}
