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
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/mutants"
	"github.com/idemcheck/idemcheck/sut/provider"
	"github.com/idemcheck/idemcheck/sut/wiremock"
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

// Embedded is the reference provider in process, on the bubble's virtual
// clock, behind the InProcess wire that orders its decisions in the
// history.
type Embedded struct {
	prov *provider.Provider
	wire *faults.InProcess
}

// NewEmbedded is the reference provider with mutant m's bugs (nil: none),
// processing each request for processing (on now's clock) and keeping
// keys for retention, recording into hist.
func NewEmbedded(processing, retention time.Duration, m *mutants.Mutant, hist *models.History, now func() time.Time) *Embedded {
	wire := &faults.InProcess{History: hist, Processing: processing, Now: now}
	pcfg := provider.Config{Retention: retention, Now: now, BeforeCommit: wire.BeforeCommit}
	if m != nil && m.Provider != nil {
		m.Provider(&pcfg)
	}
	p := provider.New(pcfg)
	wire.Handler = p
	return &Embedded{prov: p, wire: wire}
}

func (e *Embedded) Wire() http.RoundTripper           { return e.wire }
func (e *Embedded) BaseURL() string                   { return "http://provider.idemcheck.invalid" }
func (e *Embedded) Charges() ([]models.Charge, error) { return e.accountCharges(false), nil }

// OtherCharges is merchant B's ledger (Accounts).
func (e *Embedded) OtherCharges() ([]models.Charge, error) { return e.accountCharges(true), nil }

// Refunds implements Refunder: the embedded provider's refunds.
func (e *Embedded) Refunds() ([]models.Refund, error) { return e.prov.Refunds(), nil }

// Declines is the embedded provider's count of processed declines, -1
// over a Store (provider.Provider.Declines).
func (e *Embedded) Declines() int { return e.prov.Declines() }

// accountCharges is merchant B's charges (other) or every other
// account's, in creation order: the client's account is whatever its
// requests carry.
func (e *Embedded) accountCharges(other bool) []models.Charge {
	b := accountB()
	var out []models.Charge
	for scope, cs := range e.prov.ChargesByAccount() { // one read: one moment of the ledger
		if (scope == b) == other {
			out = append(out, cs...)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID }) // ch_%06d: creation order
	return out
}

// accountB is merchant B's account scope (provider.AccountScope of its
// Authorization).
func accountB() string {
	r, _ := http.NewRequest(http.MethodGet, "/", nil) // a constant URL: cannot fail
	r.Header.Set("Authorization", MerchantB)
	return provider.AccountScope(r)
}

// WireMock is a real WireMock server programmed by sut/wiremock, in real
// time. Its refunds (Refunds) are read like its charges, from WireMock's
// scenario states.
type WireMock struct {
	*wiremock.Provider
	wire *wireMockWire
}

// wireMockWire is the wire in front of WireMock: a faults.RemoteWire, so
// that each exchange's arrival and answer take their place in the
// history's order (key-scoped-per-endpoint orders a refund after its
// charge by them), which keeps the Provider's native faults.
type wireMockWire struct {
	*faults.RemoteWire
	prov *wiremock.Provider
}

// Native reports the kinds WireMock applies itself (wiremock.Provider).
func (w *wireMockWire) Native(k faults.Kind) bool { return w.prov.Native(k) }

// sharedWireMock is the one WireMock server of this process, started on
// first use (or IDEMCHECK_WIREMOCK_URL). StopWireMock stops it.
var sharedWireMock wiremock.Shared

// StopWireMock stops the WireMock server this process started for
// IDEMCHECK_PROVIDER=wiremock, if any; the TestMain of a package whose
// tests run against WireMock calls it after m.Run; the server also dies
// with the process.
func StopWireMock() { sharedWireMock.Stop() }

// WireMockURL is the base URL of this process's WireMock server, started
// if need be (a replay in a child process shares it).
func WireMockURL() (string, error) {
	srv, err := sharedWireMock.Get()
	if err != nil {
		return "", err
	}
	return srv.URL, nil
}

// NewWireMock programs the shared server afresh for one sequence, with
// mutant m's WireMock bugs planted (mutants.Mutant.WireMock), if any.
func NewWireMock(m *mutants.Mutant, hist *models.History, now func() time.Time) (*WireMock, error) {
	srv, err := sharedWireMock.Get()
	if err != nil {
		return nil, err
	}
	wcfg := wiremock.Config{Now: now} // the machine draws the faults already scaled
	if m != nil && m.WireMock != nil {
		m.WireMock(&wcfg)
	}
	p := wiremock.NewProvider(srv, wcfg)
	if err := p.Reset(); err != nil {
		return nil, fmt.Errorf("wiremock: reset: %w", err)
	}
	return &WireMock{Provider: p, wire: &wireMockWire{RemoteWire: &faults.RemoteWire{Next: p, History: hist, Now: now}, prov: p}}, nil
}

func (w *WireMock) Wire() http.RoundTripper { return w.wire }

// Amend takes each forwarded exchange's key header from WireMock's journal.
func (w *WireMock) Amend(s *models.Snapshot) error {
	j, err := w.Server().Journal()
	if err != nil {
		return err
	}
	return wiremock.Amend(s.Exchanges, j)
}
