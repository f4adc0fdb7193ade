package certify_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/internal/stranger"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// A provider that keeps its keys exactly the window its profile publishes
// (1 s here, longer than the run may wait: RetentionWaitMax 1 ms) is not
// failed for forgetting the planted key when the requirements between the
// plant and its re-send (the retries requirement honours a 1 s
// Retry-After) outlast that window: the key was forgotten after the
// window, as published (INCONCLUSIVE). Regression (outside tester): FAIL "forgotten
// after ~1.0s; the profile publishes 1s".
func TestCertify_RetentionResentAfterTheWindowIsNoFail(t *testing.T) {
	const window = time.Second
	p := &stranger.Provider{Mode: stranger.Forgetful, Forget: window}
	url := stranger.Start(t, p)
	prof := remote.ReferenceProfile()
	prof.RetentionWindow = remote.Duration(window)
	ctx, cancel := context.WithTimeout(t.Context(), runBound)
	defer cancel()
	cert, err := certify.Certify(ctx, remote.Config{BaseURL: url, APIKey: testKey, Profile: prof, Limits: remote.Limits{MaxDuration: runBound}},
		certify.Options{Only: []string{certify.ReqRetries, certify.ReqRetention}, RetentionWaitMax: time.Millisecond})
	require.NoError(t, err)
	for _, r := range cert.Requirements {
		if r.ID == certify.ReqRetention {
			assert.NotEqual(t, reports.Fail, r.Verdict, r.Reason)
			assert.Contains(t, r.Reason, "after its 1s window")
			return
		}
	}
	t.Fatal("no retention requirement in the certification")
}
