package conformance

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

// backend is the provider under test as a world sees it: the wire the
// fault layer sends through, the base URL the client is given, and the
// provider's truth. Optional capabilities are found by type assertion:
// journaled (the wire keeps its own record of what crossed the network).
type backend interface {
	// Wire is the RoundTripper behind the fault Transport.
	Wire() http.RoundTripper
	// BaseURL is what the client is configured with.
	BaseURL() string
	// Charges is the provider's truth: every charge it holds.
	Charges() ([]models.Charge, error)
}

// journaled is a backend whose wire keeps a journal of what reached it: the
// invariants about what was sent are judged from that journal.
type journaled interface {
	// Amend replaces what each exchange of s says was sent (the key
	// header) by what the journal recorded, and fails when the client's
	// own record and the journal disagree.
	Amend(s *models.Snapshot) error
}

// refresher is a backend that caches its truth between steps: Refresh
// makes the next Charges read all of it again.
type refresher interface{ Refresh() }

// budgeted is a backend whose requests are bounded by a budget; Exhausted
// reports whether it has no room for another step and, if so, why, as a
// sentence ("the requests budget is spent", or the provider's Retry-After
// that outlasts the duration budget). SearchExhausted reports whether the
// search's share of it (ShrinkShare kept for shrinking) has no room left.
type budgeted interface {
	Exhausted() (bool, string)
	SearchExhausted() (bool, string)
}

// embedded is the reference provider in process, on the bubble's virtual
// clock, behind the InProcess wire that orders its decisions in the
// history.
type embedded struct {
	prov *provider.Provider
	wire *faults.InProcess
}

func newEmbedded(cfg Config, m *mutants.Mutant, hist *models.History, now func() time.Time) *embedded {
	wire := &faults.InProcess{History: hist, Processing: cfg.Processing, Now: now}
	pcfg := provider.Config{Retention: cfg.Retention, Now: now, BeforeCommit: wire.BeforeCommit}
	if m != nil && m.Provider != nil {
		m.Provider(&pcfg)
	}
	p := provider.New(pcfg)
	wire.Handler = p
	return &embedded{prov: p, wire: wire}
}

func (e *embedded) Wire() http.RoundTripper           { return e.wire }
func (e *embedded) BaseURL() string                   { return "http://provider.idemcheck.invalid" }
func (e *embedded) Charges() ([]models.Charge, error) { return e.accountCharges(false), nil }

// OtherCharges is merchant B's ledger (the accounts capability).
func (e *embedded) OtherCharges() ([]models.Charge, error) { return e.accountCharges(true), nil }

// accountCharges is merchant B's charges (other) or every other
// account's, in creation order: the client's account is whatever its
// requests carry.
func (e *embedded) accountCharges(other bool) []models.Charge {
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
	r.Header.Set("Authorization", merchantB)
	return provider.AccountScope(r)
}

// wireMock is a real WireMock server programmed by sut/wiremock, in real
// time. Its refunds (Refunds) are read like its charges, from WireMock's
// scenario states.
type wireMock struct {
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
// first use (or IDEMCHECK_WIREMOCK_URL). stopWireMock stops it.
var sharedWireMock wiremock.Shared

// stopWireMock stops the WireMock server this process started for
// IDEMCHECK_PROVIDER=wiremock, if any; this package's TestMain calls it after m.Run;
// the server also dies with the process.
func stopWireMock() { sharedWireMock.Stop() }

// newWireMock programs the shared server afresh for one sequence, with
// mutant m's WireMock bugs planted (mutants.Mutant.WireMock), if any.
func newWireMock(m *mutants.Mutant, hist *models.History, now func() time.Time) (*wireMock, error) {
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
	return &wireMock{Provider: p, wire: &wireMockWire{RemoteWire: &faults.RemoteWire{Next: p, History: hist, Now: now}, prov: p}}, nil
}

func (w *wireMock) Wire() http.RoundTripper { return w.wire }

// Amend takes each forwarded exchange's key header from WireMock's journal.
func (w *wireMock) Amend(s *models.Snapshot) error {
	j, err := w.Server().Journal()
	if err != nil {
		return err
	}
	return wiremock.Amend(s.Exchanges, j)
}
