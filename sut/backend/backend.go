// Package backend adapts the providers under test to what one drawn
// sequence of the conformance property sees of them (Backend): the wire the
// fault layer sends through, the base URL the client is given, and the
// provider's truth. Each adapter lives in its own file: the embedded
// reference provider in process (Embedded) and on Redis (Redis, seed
// article 004's store), a real WireMock server (WireMock), a URL the
// harness did not start (Remote, with a second account), and the embedded
// provider serving a checkout service in another process (Loopback).
// Optional capabilities are found by type assertion (Journaled, Refresher,
// Budgeted, Accounts, Refunder, Decliner). Nothing here knows about rapid.
package backend

import (
	"net/http"

	"github.com/idemcheck/idemcheck/models"
)

// Backend is the provider under test as a world sees it: the wire the
// fault layer sends through, the base URL the client is given, and the
// provider's truth. Optional capabilities are found by type assertion:
// Journaled (the wire keeps its own record of what crossed the network),
// Refresher, Budgeted, Accounts, Refunder, Decliner.
type Backend interface {
	// Wire is the RoundTripper behind the fault Transport.
	Wire() http.RoundTripper
	// BaseURL is what the client is configured with.
	BaseURL() string
	// Charges is the provider's truth: every charge it holds.
	Charges() ([]models.Charge, error)
}

// Journaled is a backend whose wire keeps a journal of what reached it: the
// invariants about what was sent are judged from that journal.
type Journaled interface {
	// Amend replaces what each exchange of s says was sent (the key
	// header) by what the journal recorded, and fails when the client's
	// own record and the journal disagree.
	Amend(s *models.Snapshot) error
}

// Refresher is a backend that caches its truth between steps: Refresh
// makes the next Charges read all of it again.
type Refresher interface{ Refresh() }

// Budgeted is a backend whose requests are bounded by a budget; Exhausted
// reports whether it has no room for another step and, if so, why, as a
// sentence ("the requests budget is spent", or the provider's Retry-After
// that outlasts the duration budget). SearchExhausted reports whether the
// search's share of it (ShrinkShare kept for shrinking) has no room left.
type Budgeted interface {
	Exhausted() (bool, string)
	SearchExhausted() (bool, string)
}

// ShrinkShare is the share of each budget of a run against a URL
// (requests, charges, duration), or of a checkout service's duration, kept
// for shrinking: the search for new counterexamples stops once
// 1-ShrinkShare of a budget is used, so every shrink has at least this
// share left. A shrink cut short by the budget reports its smallest
// counterexample as "not minimal: budget".
const ShrinkShare = 0.3

// Accounts is a backend that keeps its charges per account and can serve
// merchant B (MerchantB): OtherCharges is B's ledger.
type Accounts interface {
	OtherCharges() ([]models.Charge, error)
}

// OtherCharges is merchant B's ledger when b keeps one (Accounts), else
// none.
func OtherCharges(b Backend) ([]models.Charge, error) {
	if a, ok := b.(Accounts); ok {
		return a.OtherCharges()
	}
	return nil, nil
}

// Refunder is a backend whose refunds the harness can read: the refund
// action and the refund invariants need it.
type Refunder interface {
	Refunds() ([]models.Refund, error)
}

// Decliner is a backend that counts the declines its provider processed:
// a side effect that a replayed decline must not have.
type Decliner interface {
	// Declines is the number of declines processed, or -1 when not known.
	Declines() int
}

// Declines is b's count of processed declines (Decliner), or -1.
func Declines(b Backend) int {
	if d, ok := b.(Decliner); ok {
		return d.Declines()
	}
	return -1
}

// MerchantB is the second merchant's credential in process: the
// property's client is merchant A (its own Authorization, or none), and a
// probe as another account sends merchant A's key as merchant B; a
// provider scopes keys by it (provider.AccountScope), and against a URL
// the second key's dialect replaces it (WithSecondAccount). A test value,
// never a secret.
const MerchantB = "Bearer sk_test_idemcheck_merchant_b"

// AppendOnly is a provider whose Charges and Refunds only grow, an
// earlier one never changing, and whose reads hand out slices a later read
// does not write into (the embedded provider: its ledger reads only what
// was added): the machine then tells the Checker how much of each is
// unchanged since the last step (check.StateDelta).
type AppendOnly interface{ AppendOnly() }
