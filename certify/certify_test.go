package certify_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// Against the conformant reference provider every requirement passes,
// except those the profile or the setup rule out: with a 3 s published
// window the retention requirement is tested too.
func TestCertify_ReferenceProviderPasses(t *testing.T) {
	url := startRef(t, "", 3*time.Second, 50*time.Millisecond)
	prof := remote.ReferenceProfile()
	prof.RetentionWindow = remote.Duration(3 * time.Second)
	cert := certifyURL(t, url, prof, certify.Options{})
	v := verdicts(t, cert)
	for _, r := range cert.Requirements {
		switch r.ID {
		case certify.ReqCrossAccount:
			assert.Equal(t, reports.NotJudged, r.Verdict, "no second key was given")
		case certify.ReqSlowCreate, certify.ReqRestartHeld, certify.ReqRestartOnce, certify.ReqOutageRefused, certify.ReqOutageReplayed:
			assert.Equal(t, reports.NotJudged, r.Verdict, "no lifecycle hook nor lease was given: %s", r.Reason)
		default:
			assert.Equal(t, reports.Pass, r.Verdict, "%s: %s", r.ID, r.Reason)
		}
	}
	assert.Len(t, v, len(certify.Requirements()))
}
