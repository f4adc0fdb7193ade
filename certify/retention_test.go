package certify_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/internal/stranger"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// forgetAfter is how long the forgetful stranger keeps a key: far less
// than the 1 s Retry-After the retries requirement honours, so a key
// planted before it is forgotten by the end of the run.
const forgetAfter = 200 * time.Millisecond

// certifyLimits certifies url with the reference profile (24 h window)
// under lim, running only the requirements in only.
func certifyLimits(t *testing.T, url string, lim remote.Limits, only ...string) (reports.Certification, map[string]reports.RequirementResult) {
	t.Helper()
	lim.MaxDuration = runBound
	ctx, cancel := context.WithTimeout(t.Context(), runBound)
	defer cancel()
	cert, err := certify.Certify(ctx, remote.Config{BaseURL: url, APIKey: testKey, Profile: remote.ReferenceProfile(), Limits: lim}, certify.Options{Only: only})
	require.NoError(t, err)
	verdicts(t, cert)
	out := map[string]reports.RequirementResult{}
	for _, r := range cert.Requirements {
		out[r.ID] = r
	}
	return cert, out
}

// A provider that forgets its keys ~200 ms after storing them, judged
// against a profile publishing 24 h (too long to wait out), fails
// retention-window-honoured: the key stored before the first requirement
// is re-sent, identical, after the last (the retries requirement between
// them honours a 1 s Retry-After), and a new charge answers. The
// evidence holds both sends; the written JSON holds no API key.
// Regression (outside tester): NOT JUDGED, whatever the provider forgot.
func TestCertify_RetentionForgottenWithinTheRunFails(t *testing.T) {
	p := &stranger.Provider{Mode: stranger.Forgetful, Forget: forgetAfter}
	cert, got := certifyLimits(t, stranger.Start(t, p), remote.Limits{}, certify.ReqRetries, certify.ReqRetention)
	r := got[certify.ReqRetention]
	require.Equal(t, reports.Fail, r.Verdict, r.Reason)
	assert.Contains(t, r.Reason, "forgotten after ~")
	assert.Contains(t, r.Reason, "the profile publishes 24h")
	var sent []models.Exchange
	for _, e := range r.Evidence {
		if e.IsPost() {
			sent = append(sent, e)
		}
	}
	require.Len(t, sent, 2, "the planted create and its re-send")
	assert.Equal(t, sent[0].Key, sent[1].Key)
	assert.Equal(t, sent[0].Fingerprint, sent[1].Fingerprint, "the identical request")
	assert.NotEqual(t, sent[0].ProviderChargeID, sent[1].ProviderChargeID, "the re-send charged again")
	path, err := certify.WriteJSON(t.TempDir(), cert)
	require.NoError(t, err)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.False(t, strings.Contains(string(b), testKey.Reveal()), "the API key is scrubbed")
}

// The retention requirement's re-send is kept out of the budgets the
// requirements between spend: with one create too few for the retries
// requirement beside it, retries is INCONCLUSIVE (budget) and the
// re-send is still made; the provider gets no more creates than the
// budget.
func TestCertify_RetentionResendKeepsItsBudget(t *testing.T) {
	p := &stranger.Provider{Mode: stranger.Forgetful, Forget: forgetAfter}
	const charges = 7 // the plant (1) + retries' 6 would fit; its reservation does not
	_, got := certifyLimits(t, stranger.Start(t, p), remote.Limits{MaxCharges: charges}, certify.ReqRetries, certify.ReqRetention)
	assert.Equal(t, reports.Inconclusive, got[certify.ReqRetries].Verdict, got[certify.ReqRetries].Reason)
	assert.Contains(t, got[certify.ReqRetries].Reason, "not enough")
	assert.NotEqual(t, reports.Inconclusive, got[certify.ReqRetention].Verdict, got[certify.ReqRetention].Reason)
	posts, _ := p.Received()
	assert.LessOrEqual(t, posts, charges)
}

// The reference provider keeps its keys: with a 24 h window the
// retention requirement stays NOT JUDGED, saying how long the key
// planted at the start was shown to be kept, and when it was re-sent.
func TestCertify_RetentionHeldIsNotJudged(t *testing.T) {
	_, got := certifyLimits(t, startRef(t, "", 0, 0), remote.Limits{}, certify.ReqReplay, certify.ReqRetention)
	r := got[certify.ReqRetention]
	assert.Equal(t, reports.NotJudged, r.Verdict, r.Reason)
	assert.Contains(t, r.Reason, "held ")
	assert.Contains(t, r.Reason, "of its 24h window")
	// Regression: its line said "replayed … at its end", printed before the
	// property ran; the re-send comes at the end of the requirements.
	assert.Contains(t, r.Reason, " at the end of the requirements)")
	assert.NotContains(t, r.Reason, "at its end")
	assert.Len(t, r.Evidence, 2)
}
