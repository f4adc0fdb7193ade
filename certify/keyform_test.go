package certify_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/provider/server"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// startKeyForm serves the reference provider accepting the key in form
// only (idemcheck serve --key-form).
func startKeyForm(t *testing.T, form string) string {
	t.Helper()
	h, err := server.Handler("", 0, 0)
	require.NoError(t, err)
	h, err = server.OnlyKeyForm(h, form)
	require.NoError(t, err)
	s, err := server.Start(h)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s.URL
}

// Against a provider that accepts one key form only, the preflight learns
// it and every requirement is judged as against the reference provider:
// quoted-key-equals-bare-key alone FAILs, naming the refused form and both
// answers. Regression (issue 24): against a bare-only provider every keyed
// create was answered 400 (a real middleware: 5xx), and 15 of 17
// requirements ended INCONCLUSIVE "the first create answered …".
func TestCertify_OneKeyFormIsLearned(t *testing.T) {
	ref := certifyURL(t, startRef(t, "", 0, 0), remote.ReferenceProfile(), certify.Options{})
	assert.Equal(t, remote.KeyFormQuoted, ref.KeyForm)
	for form, refusal := range map[string]string{
		server.KeyFormBare:   "the quoted (Structured Field String) key is refused: the quoted key answered 400 (1 send), the bare token of the same key 201",
		server.KeyFormQuoted: "the bare token is refused: the quoted key answered 201",
	} {
		t.Run(form, func(t *testing.T) {
			cert := certifyURL(t, startKeyForm(t, form), remote.ReferenceProfile(), certify.Options{})
			assert.Equal(t, form, cert.KeyForm)
			got := byID(cert)
			for _, r := range ref.Requirements {
				g := got[r.ID]
				if r.ID == certify.ReqQuotedKey {
					assert.Equal(t, reports.Fail, g.Verdict, g.Reason)
					assert.Contains(t, g.Reason, refusal)
					assert.Len(t, g.Evidence, 2, "the preflight's two creates are its evidence")
					continue
				}
				assert.Equal(t, r.Verdict, g.Verdict, "%s: %s", r.ID, g.Reason)
			}
		})
	}
}

// A profile's key_form is the form the run sends; quoted-key-equals-bare-key
// then probes both forms itself.
func TestCertify_ProfilePinsTheKeyForm(t *testing.T) {
	prof := remote.ReferenceProfile()
	prof.KeyForm = remote.KeyFormBare
	cert := certifyURL(t, startKeyForm(t, server.KeyFormBare), prof, certify.Options{Only: []string{certify.ReqQuotedKey, certify.ReqReplay}})
	assert.Equal(t, remote.KeyFormBare, cert.KeyForm)
	got := byID(cert)
	assert.Equal(t, reports.Pass, got[certify.ReqReplay].Verdict, got[certify.ReqReplay].Reason)
	q := got[certify.ReqQuotedKey]
	assert.Equal(t, reports.Fail, q.Verdict, q.Reason)
	assert.Contains(t, q.Reason, "the quoted (Structured Field String) key is refused")
	assert.Len(t, q.Evidence, 2, "its own probe: the quoted key, then the bare token")
}

func byID(cert reports.Certification) map[string]reports.RequirementResult {
	out := map[string]reports.RequirementResult{}
	for _, r := range cert.Requirements {
		out[r.ID] = r
	}
	return out
}
