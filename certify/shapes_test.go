package certify_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/internal/stranger"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/provider"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// secondKey is the second account's sandbox-looking key.
const secondKey remote.APIKey = "sk_test_idemcheckSECONDaccount0123"

// certifyTwoAccounts certifies url with the reference profile declaring
// two accounts and both test keys, running only the requirements in only.
func certifyTwoAccounts(t *testing.T, url string, only ...string) map[string]reports.RequirementResult {
	t.Helper()
	prof := remote.ReferenceProfile()
	prof.Accounts = 2
	ctx, cancel := context.WithTimeout(t.Context(), runBound)
	defer cancel()
	cert, err := certify.Certify(ctx, remote.Config{BaseURL: url, APIKey: testKey, SecondAPIKey: secondKey, Profile: prof,
		Limits: remote.Limits{MaxDuration: runBound}}, certify.Options{Only: only})
	require.NoError(t, err)
	verdicts(t, cert)
	out := map[string]reports.RequirementResult{}
	for _, r := range cert.Requirements {
		out[r.ID] = r
	}
	return out
}

// The reference provider served by refprovider keeps one request in other
// shapes as one, and scopes keys per account; each shape and account
// mutant fails its requirement with the exchanges that show it.
func TestCertify_ShapesAndAccounts(t *testing.T) {
	only := []string{certify.ReqShapes, certify.ReqCrossAccount}
	for _, c := range []struct{ mutant, fails string }{
		{"", ""},
		{"path-sensitive-key", certify.ReqShapes},
		{"order-sensitive-fingerprint", certify.ReqShapes},
		{"global-key-scope", certify.ReqCrossAccount},
	} {
		t.Run("mutant="+c.mutant, func(t *testing.T) {
			t.Parallel()
			got := certifyTwoAccounts(t, startRef(t, c.mutant, 0, 0), only...)
			for _, id := range only {
				r := got[id]
				if id != c.fails {
					assert.Equal(t, reports.Pass, r.Verdict, "%s: %s", id, r.Reason)
					continue
				}
				assert.Equal(t, reports.Fail, r.Verdict, "%s: %s", id, r.Reason)
				assert.NotEmpty(t, r.Reason)
				assert.NotEmpty(t, r.Evidence, "a FAIL carries its exchanges")
			}
		})
	}
}

// A provider that refuses the second account's use of the first
// account's key (409) fails key-not-replayed-across-accounts too: a key of
// one account must not block another's.
func TestCertify_CrossAccountBlockedKeyFails(t *testing.T) {
	prov := provider.New(provider.Config{})
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("Authorization") == "Bearer "+string(secondKey) {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusConflict)
			_, _ = w.Write([]byte(`{"title":"Conflict","status":409,"detail":"key in use"}`))
			return
		}
		prov.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	r := certifyTwoAccounts(t, s.URL, certify.ReqCrossAccount)[certify.ReqCrossAccount]
	assert.Equal(t, reports.Fail, r.Verdict, r.Reason)
	assert.Contains(t, r.Reason, "blocked")
	assert.NotEmpty(t, r.Evidence)
}

// A provider that never charges — declining every create (402 with a
// decline body), answering 201 with a charge it never creates, or 500 —
// gives equivalent-request-shapes-agree no control charge: INCONCLUSIVE
// with the reason, never PASS nor FAIL, and no shape is sent (the
// provider gets the control create alone). Regression (outside tester):
// the phantom's shapes were judged (FAIL) against a charge that never was.
func TestCertify_ShapesWithoutAChargeAreInconclusive(t *testing.T) {
	for name, mode := range map[string]stranger.Mode{"declines": stranger.Declines, "phantom": stranger.Phantom, "broken": stranger.Broken} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := &stranger.Provider{Mode: mode}
			_, got := certifyLimits(t, stranger.Start(t, p), remote.Limits{}, certify.ReqShapes)
			r := got[certify.ReqShapes]
			assert.Equal(t, reports.Inconclusive, r.Verdict, r.Reason)
			assert.NotEmpty(t, r.Reason)
			assert.Equal(t, 1, postsIn(r.Evidence), "the control create alone (the preflight's key-form probe is not this requirement's)")
			assert.Zero(t, p.Charges())
		})
	}
}

// Every shape is sent and each failing one is listed: against a provider
// whose key depends on the URL and whose fingerprint on the body bytes,
// one run names the trailing slash and the query parameter (charges of
// their own) and the reordered fields (422). Regression (issue 24, item
// 4): the requirement returned at the trailing slash, and the reordered
// fields were never sent.
func TestCertify_ShapesListsEveryFailingShape(t *testing.T) {
	got := certifyTwoAccounts(t, startRef(t, "path-sensitive-key,order-sensitive-fingerprint", 0, 0), certify.ReqShapes)
	r := got[certify.ReqShapes]
	assert.Equal(t, reports.Fail, r.Verdict, r.Reason)
	assert.Contains(t, r.Reason, "with a trailing slash it was answered 201")
	assert.Contains(t, r.Reason, "with the fields in another order it was refused with 422 as another body")
	assert.Contains(t, r.Reason, "with an unrelated query parameter it was answered 201")
	assert.Contains(t, r.Reason, "lookup by merchant reference found 3 charges")
	assert.Equal(t, 5, postsIn(r.Evidence), "the control create and all four shapes")
}
