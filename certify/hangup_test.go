package certify_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// The reference provider, processing longer than the proxy waits before it
// hangs up, finishes the hung-up create and stores it: the retry is its
// replay and one charge exists. (free-key-on-hangup fails the same
// requirement in TestCertify_ProviderMutantsFailTheirRequirement.)
func TestCertify_ReferenceSurvivesAHangUpMidProcessing(t *testing.T) {
	url := startRef(t, "", 0, 500*time.Millisecond)
	cert := certifyURL(t, url, remote.ReferenceProfile(), certify.Options{Only: []string{certify.ReqHangUp}})
	v := verdicts(t, cert)
	require.Equal(t, reports.Pass, v[certify.ReqHangUp])
	for _, r := range cert.Requirements {
		if r.ID == certify.ReqHangUp {
			require.NotEmpty(t, r.Evidence)
			assert.Equal(t, "the client hung up while the provider was processing", r.Evidence[0].Err)
		}
	}
}
