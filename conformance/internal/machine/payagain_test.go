package machine

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/checkout"
	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/provider"
)

// TestPayAgainOutlastedByTheProviderIsSettled: against a URL, a correct
// provider slower than the client's total timeout answers paying an
// abandoned order again only after the client gave up: the call is
// PaymentPending, rightly, and reconciliation then finds the charge.
//
// Regression: reconciliation-converges failed "order 1 was abandoned but
// paying it again answered PaymentPending" against `idemcheck serve
// --processing 500ms` (a known false alarm of the property against a
// provider slower than about 300 ms).
func TestPayAgainOutlastedByTheProviderIsSettled(t *testing.T) {
	const processing = 1500 * time.Millisecond // more than the 667 ms total timeout
	var slow atomic.Bool
	prov := provider.New(provider.Config{BeforeCommit: func(*http.Request) {
		if slow.Load() {
			time.Sleep(processing) // real time: the provider is a URL
		}
	}})
	w := remoteWorld(t, prov, "0d1c2b3a4f5f")

	// An order whose attempt never reached the provider, abandoned.
	o := w.openOrder("shopper", 1000, "EUR")
	drop := faults.Fault{Kind: faults.KindDropRequest}
	w.faults.Schedule([]faults.Fault{drop, drop, drop, drop})
	require.Equal(t, checkout.Pending, w.checkout(w.cli, "shopper", o, "visa").Outcome)
	w.faults.Heal()
	w.clock.Advance(w.ccfg.TotalTimeout + w.ccfg.AbandonAfter + w.ccfg.Interval)
	w.reconcile("reconciler")
	require.Equal(t, models.AttemptAbandoned, w.attempts()[0].Status)

	slow.Store(true)
	m := New(w, Check{Stop: &Stop{}})
	m.payAbandonedAgain()
	require.Nil(t, m.failed, "a provider slower than the client is no convergence failure")
	require.Empty(t, m.stopped)
	require.Equal(t, models.OrderPaid, w.order(o.ID).Status, "reconciliation found the pay-again's charge")
}
