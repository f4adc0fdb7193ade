package checkout_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/checkout"
	"github.com/idemcheck/idemcheck/conformance"
)

// serialized is a checkout a team made "safe" against double clicks by
// holding one sync.Mutex across each whole checkout, provider call
// included. A second click then waits on the mutex while the first waits
// on the provider (a retry's pause, a slow answer): inside the harness's
// synctest bubble a goroutine blocked on a mutex is not durably blocked,
// so virtual time never advances and the first call never returns.
type serialized struct {
	mu sync.Mutex // held across each Checkout
	checkout.Client
}

func (s *serialized) Checkout(ctx context.Context, o checkout.Order, token string) checkout.Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Client.Checkout(ctx, o, token)
}

// TestCheckClient_mutexAcrossCall: a client that holds a mutex across a
// provider call ends the check with a named error — the step, and what to
// look for — within a bounded wall-clock time, instead of hanging
// CheckClient forever with no message (issue 27, item 4). Regression: the
// child ran until its context (here 3 minutes) killed it, printing
// nothing. Its replay line names rapid's seed, which replays the stalled
// check, and no fail file. Regression: rapid named the fail file of the
// last check, which had failed at once on the stall without a draw; rapid
// found it invalid on replay and searched anew, stalling at step 2 once
// and at step 14 another time.
func TestCheckClient_mutexAcrossCall(t *testing.T) {
	if inChild(t.Name()) {
		conformance.CheckClient(t, func(env checkout.Env) (checkout.Client, error) {
			c, err := newShop(env)
			return &serialized{Client: c}, err
		})
		return
	}
	t.Parallel()
	start := time.Now()
	out, failed := runChild(t, t.Name(), 3*time.Minute, "RAPID_CHECKS=100")
	t.Logf("the stalled check ended after %v", time.Since(start).Round(time.Second))
	require.True(t, failed, "the check must fail; output:\n%s", out)
	assert.Contains(t, out, "client-api: the sequence stalled at step ", "names the step in flight")
	assert.Contains(t, out, "sync.Mutex held across a provider call", "says what to look for")
	assert.Contains(t, out, "[rapid] failed after", "a failure rapid reports with its seed, not a crash")
	assert.Regexp(t, `To reproduce, specify -run="[^"]+" -rapid\.seed=[0-9]+\n`, out, "the seed replays the stalled check")
	assert.NotContains(t, out, "-rapid.failfile=", "a stall keeps no fail file: it would replay nothing")
	assert.Contains(t, out, "neither shrunk nor kept in a fail file", "says why")
	assert.NotContains(t, out, "panic:")
	assert.NotContains(t, out, "DATA RACE", "the watch reads the stalled check's pulse only")
	assert.Equal(t, 1, strings.Count(out, "--- FAIL: TestCheckClient_mutexAcrossCall"))
}
