package certify_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/internal/hostile"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// notDialectReason is how a verdict drawn only from answers that are not
// of the reference dialect begins its reason.
const notDialectReason = `the provider's answers are not charges of the "reference" dialect`

// Regression (issue 22, item 7): against a server answering every create
// 201 with random bytes (and lookups truly, as the reference provider),
// lost-response-settled FAILed by comparing two random bodies, and
// concurrent-same-key-charges-once, hang-up-settled and
// inflight-mismatch-refused FAILed on bodies that are not charges. A
// verdict of FAIL needs answers of the dialect: each is INCONCLUSIVE now,
// its reason naming the answers. With lookups answered in random bytes
// too, the preflight already says the provider does not speak the dialect.
func TestCertify_RandomBytesAreNoFail(t *testing.T) {
	for name, o := range map[string]hostile.Options{
		"lookups of the dialect": {Mode: hostile.Random, PostsOnly: true},
		"lookups random too":     {Mode: hostile.Random},
	} {
		t.Run(name, func(t *testing.T) {
			s := hostile.Start(t, o)
			cert, err := certifyHostile(t, s, remote.Limits{MaxRequests: 300}, certify.Options{})
			if o.PostsOnly {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, certify.ErrDialect) // the preflight's lookup is no charge list
			}
			noneIs(t, cert, reports.Fail)
			noneIs(t, cert, reports.Pass)
			for _, r := range cert.Requirements {
				if r.Verdict != reports.NotJudged {
					assert.Equal(t, reports.Inconclusive, r.Verdict, r.ID)
					assert.NotEmpty(t, r.Reason, r.ID)
				}
				if !o.PostsOnly {
					continue
				}
				switch r.ID {
				case certify.ReqLostResponse, certify.ReqConcurrent, certify.ReqHangUp, certify.ReqInflightMismatch:
					assert.Contains(t, r.Reason, notDialectReason, r.ID)
					assert.Contains(t, r.Reason, "201 not a charge", r.ID)
					assert.NotEmpty(t, r.Evidence, "%s: the answers that are not of the dialect are its evidence", r.ID)
				}
			}
		})
	}
}

// The control of TestCertify_RandomBytesAreNoFail: a provider that speaks
// the dialect and breaks the rule still FAILs the same requirements, its
// answers (charges) showing it.
func TestCertify_DialectAnswersStillFail(t *testing.T) {
	for mutant, req := range map[string]string{
		"no-inflight-lock":          certify.ReqConcurrent,
		"inflight-mismatch-charges": certify.ReqInflightMismatch,
	} {
		t.Run(mutant, func(t *testing.T) {
			t.Parallel()
			url := startRef(t, mutant, 0, 200*time.Millisecond)
			cert := certifyURL(t, url, remote.ReferenceProfile(), certify.Options{Only: []string{req}})
			v := verdicts(t, cert)
			require.Equal(t, reports.Fail, v[req], req)
			for _, r := range cert.Requirements {
				if r.ID == req {
					assert.NotContains(t, r.Reason, notDialectReason)
				}
			}
		})
	}
}
