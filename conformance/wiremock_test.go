package conformance_test

import (
	"encoding/json"
	"os"
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
