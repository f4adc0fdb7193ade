package machine

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/checkout"
	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/client"
	"github.com/idemcheck/idemcheck/sut/provider"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// TestRemoteTimeWaitsForTheProvider: against a remote provider, time that
// passes in a step passes for the provider too. Its processing is real
// time while the run's clock jumps (time-passes), so before a jump the
// harness waits for the answer to every request that reached the provider,
// the ones whose client gave up included.
//
// Regression: the clock jumped at once, the reconciliation job found no
// charge for an attempt the provider was still processing and abandoned
// it, and the charge that landed after it was blamed on a correct provider
// (a provider that keeps processing 1 s after the client hung up failed
// at-most-one-charge-per-order once the abandoned order was paid again).
// The in-process refprovider of TestCertify commits as soon as the client
// hangs up, which left only a narrow window there: a flake.
func TestRemoteTimeWaitsForTheProvider(t *testing.T) {
	const processing = 500 * time.Millisecond // more than the 200 ms attempt timeout
	prov := provider.New(provider.Config{BeforeCommit: func(*http.Request) { time.Sleep(processing) }})
	w := remoteWorld(t, prov, "0d1c2b3a4f5e")
	w.ccfg.MaxRetries = -1 // one try, which times out while the provider processes it
	w.cli = &refClient{w: w, cli: client.New(w.ccfg, w.store)}

	o := w.openOrder("shopper", 1000, "EUR")
	res := w.checkout(w.cli, "shopper", o, "visa")
	require.Equal(t, checkout.Pending, res.Outcome, "the try must time out while the provider processes it")

	w.clock.Advance(w.ccfg.AbandonAfter + w.ccfg.Interval) // a time-passes step
	w.reconcile("reconciler")
	as := w.attempts()
	require.Len(t, as, 1)
	require.Equal(t, models.AttemptSucceeded, as[0].Status,
		"the provider charged the attempt %s after the client gave up; reconciliation must find the charge, not abandon the attempt", processing)
	snap, err := w.Snapshot()
	require.NoError(t, err)
	require.Nil(t, check.Evaluate(snap, check.WithoutProviderOnly(check.Safety())))
}

// remoteWorld is a world whose provider is h on a loopback URL, at the
// default time scale, its run named runID.
func remoteWorld(t *testing.T, h http.Handler, runID string) *World {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	p, err := remote.New(remote.Config{BaseURL: s.URL, RunID: runID})
	require.NoError(t, err)
	cfg, err := Config{Provider: s.URL, Remote: p, TimeScale: DefaultTimeScale}.WithDefaults()
	require.NoError(t, err)
	w, err := NewWorld(cfg, nil)
	require.NoError(t, err)
	return w
}
