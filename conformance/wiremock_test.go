package conformance_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/sut/wiremock"
	"github.com/stretchr/testify/require"
)

// sharedWireMock is the WireMock server the child runs below attach to
// (IDEMCHECK_WIREMOCK_URL), started once for the package.
var sharedWireMock wiremock.Shared

// wireMockEnv starts (once) the package's WireMock server and returns the
// environment that points a child run at it.
func wireMockEnv(t *testing.T) []string {
	t.Helper()
	srv, err := sharedWireMock.Get()
	require.NoError(t, err)
	// The child uses the server under this process's turn (see wiremock.Shared).
	return []string{"IDEMCHECK_PROVIDER=wiremock", "IDEMCHECK_WIREMOCK_URL=" + srv.URL, "IDEMCHECK_WIREMOCK_LOCKED=1"}
}

// TestWireMockReferencePasses: the rapid property with a real WireMock
// server as the provider, in real time, passes for the reference client.
func TestWireMockReferencePasses(t *testing.T) {
	out, failed, _ := runConformance(t, "1", append(wireMockEnv(t), "RAPID_CHECKS=25", "IDEMCHECK_MUTANT=")...)
	require.False(t, failed, out)
	require.Contains(t, out, "replay-consistent              not judged")
	require.Contains(t, out, "lose-response×", "WireMock's faults were injected")
	// The refunds endpoint is driven and judged on WireMock too (issue 10).
	require.Regexp(t, `at-most-one-refund-per-intent\s+evaluated .* over +[1-9]\d* refund intents`, out)
	require.Regexp(t, `key-scoped-per-endpoint\s+evaluated .* over +[1-9]\d* requests to /v1/refunds`, out)
}

// TestWireMockCatchesRefundBugs: the reference provider's two mutants of
// the refunds endpoint, planted in WireMock's stubs (wiremock.Planted),
// fail on their documented invariants: the charge's scenario replayed on
// /v1/refunds on key-scoped-per-endpoint, a refund key not kept on
// at-most-one-refund-per-intent.
func TestWireMockCatchesRefundBugs(t *testing.T) {
	for _, c := range []struct{ mutant, seed, want string }{
		{"refund-replays-charge", "1", "key-scoped-per-endpoint: a refund under the key of the charge of order "},
		// seed 1 meets it after 60 sequences, seed 2 in the first
		{"refund-not-idempotent", "2", "at-most-one-refund-per-intent: the provider holds "},
	} {
		t.Run(c.mutant, func(t *testing.T) {
			// Shrinking is bounded: the invariant is what is asserted, not
			// the smallest sequence.
			out, failed, dir := runConformance(t, c.seed, append(wireMockEnv(t), "IDEMCHECK_MUTANT="+c.mutant, "RAPID_SHRINKTIME=5s")...)
			require.True(t, failed, "the property must fail against the mutant; output:\n%s", out)
			require.Contains(t, out, c.want)
			raw, err := os.ReadFile(reportFile(dir, c.mutant+"/wiremock", "failure.json"))
			require.NoError(t, err, out)
			var rep struct{ Invariant, Provider string }
			require.NoError(t, json.Unmarshal(raw, &rep))
			require.Equal(t, []string{strings.SplitN(c.want, ":", 2)[0], "wiremock"}, []string{rep.Invariant, rep.Provider})
		})
	}
}

// TestWireMockCatchesFreshKeyPerRequest: against WireMock, the planted bug
// of the seed's first trap fails on one-key-per-intent, and the evidence —
// the keys on the wire — comes from WireMock's request journal.
func TestWireMockCatchesFreshKeyPerRequest(t *testing.T) {
	out, failed, dir := runConformance(t, "1", append(wireMockEnv(t), "IDEMCHECK_MUTANT=fresh-key-per-request")...)
	require.True(t, failed, "the property must fail against the mutant; output:\n%s", out)
	require.Contains(t, out, "one-key-per-intent: order 1 intent 1 sent ")
	raw, err := os.ReadFile(reportFile(dir, "fresh-key-per-request/wiremock", "failure.json"))
	require.NoError(t, err, out)
	var rep struct {
		Invariant string `json:"invariant"`
		Provider  string `json:"provider"`
		History   struct {
			Exchanges []struct {
				Method    string `json:"method"`
				KeyHeader string `json:"key_header"`
				Journaled bool   `json:"journaled"`
			} `json:"exchanges"`
		} `json:"history"`
	}
	require.NoError(t, json.Unmarshal(raw, &rep))
	require.Equal(t, "one-key-per-intent", rep.Invariant)
	require.Equal(t, "wiremock", rep.Provider)
	journaled := 0
	for _, e := range rep.History.Exchanges {
		if e.Method == "POST" && e.Journaled {
			journaled++
		}
	}
	require.NotZero(t, journaled, "the report's POSTs must be the ones WireMock's journal recorded:\n%s", raw)
}
