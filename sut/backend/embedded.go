package backend

import (
	"net/http"
	"sync"
	"time"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/mutants"
	"github.com/idemcheck/idemcheck/sut/provider"
	"github.com/idemcheck/idemcheck/sut/stripewire"
)

// Embedded is the reference provider in process, on the bubble's virtual
// clock, behind the InProcess wire that orders its decisions in the
// history.
type Embedded struct {
	prov *provider.Provider
	wire *faults.InProcess

	mu          sync.Mutex      // guards the ledger below
	read        int             // the provider's charges read so far
	mine, other []models.Charge // what was read, by account: the client's, merchant B's
	refunds     []models.Refund // every refund read, in creation order
}

// NewEmbedded is the reference provider with mutant m's bugs (nil: none),
// processing each request for processing (on now's clock) and keeping
// keys for retention, recording into hist.
func NewEmbedded(processing, retention time.Duration, m *mutants.Mutant, hist *models.History, now func() time.Time) *Embedded {
	wire := &faults.InProcess{History: hist, Processing: processing, Now: now}
	pcfg := provider.Config{Retention: retention, Now: now, BeforeCommit: wire.BeforeCommit,
		LookupLagOf: func(r *http.Request) time.Duration { return faults.LookupLag(r.Context()) }}
	if m != nil && m.Provider != nil {
		m.Provider(&pcfg)
	}
	p := provider.New(pcfg)
	wire.Handler = p
	return &Embedded{prov: p, wire: wire}
}

// ServeStripe makes e speak Stripe's API (provider.Provider.Stripe, the
// stripe dialect) instead of docs/provider-api.md: the same provider,
// key store and ledger behind Stripe's form bodies, errors and bare
// keys; the wire reads its answers' charge ids in the dialect. Call it
// before the first request.
func (e *Embedded) ServeStripe() {
	e.wire.Handler, e.wire.Dialect = e.prov.Stripe(), stripewire.Recorder{}
}

func (e *Embedded) Wire() http.RoundTripper           { return e.wire }
func (e *Embedded) BaseURL() string                   { return "http://provider.idemcheck.invalid" }
func (e *Embedded) Charges() ([]models.Charge, error) { return e.accountCharges(false), nil }

// OtherCharges is merchant B's ledger (Accounts).
func (e *Embedded) OtherCharges() ([]models.Charge, error) { return e.accountCharges(true), nil }

// AppendOnly implements AppendOnly: the provider only appends charges and
// refunds, and accountCharges and Refunds read only what was added.
func (e *Embedded) AppendOnly() {}

// Refunds implements Refunder: the embedded provider's refunds, in
// creation order, read as accountCharges reads the charges: only those
// added since the last call (the provider only appends refunds), handed
// out in a slice capped at its length.
func (e *Embedded) Refunds() ([]models.Refund, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.refunds = append(e.refunds, e.prov.RefundsFrom(len(e.refunds))...)
	return e.refunds[:len(e.refunds):len(e.refunds)], nil
}

// Declines is the embedded provider's count of processed declines, -1
// over a Store (provider.Provider.Declines).
func (e *Embedded) Declines() int { return e.prov.Declines() }

// accountCharges is merchant B's charges (other) or every other
// account's, in creation order: the client's account is whatever its
// requests carry. It reads only the charges added since its last call
// (provider.Provider.ChargesFrom; charges are only appended), so a step
// costs what it added, not the ledger's length. The slices it returns
// share the ledger's backing arrays, capped at their length: an append
// by the caller copies, and the ledger only appends past what it handed
// out.
func (e *Embedded) accountCharges(other bool) []models.Charge {
	e.mu.Lock()
	defer e.mu.Unlock()
	charges, scopes := e.prov.ChargesFrom(e.read)
	b := accountB()
	for i, ch := range charges {
		if scopes[i] == b {
			e.other = append(e.other, ch)
		} else {
			e.mine = append(e.mine, ch)
		}
	}
	e.read += len(charges)
	out := e.mine
	if other {
		out = e.other
	}
	return out[:len(out):len(out)]
}

// accountB is merchant B's account scope (provider.AccountScope of its
// Authorization), worked out once.
var accountB = sync.OnceValue(func() string {
	r, _ := http.NewRequest(http.MethodGet, "/", nil) // a constant URL: cannot fail
	r.Header.Set("Authorization", MerchantB)
	return provider.AccountScope(r)
})
