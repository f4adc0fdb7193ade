package backend

import (
	"net/http"
	"sort"
	"time"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/mutants"
	"github.com/idemcheck/idemcheck/sut/provider"
)

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
