package backend

import (
	"fmt"
	"net/http"
	"time"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/mutants"
	"github.com/idemcheck/idemcheck/sut/wiremock"
)

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
