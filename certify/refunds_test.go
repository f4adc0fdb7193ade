package certify_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// Each refunds mutant, served by refprovider's handler on loopback, fails
// the refunds requirement it breaks, with the exchanges that show it; the
// other refunds requirement still passes.
func TestCertify_RefundMutantsFailTheirRequirement(t *testing.T) {
	cases := []struct{ mutant, want, other string }{
		{"keys-shared-across-endpoints", certify.ReqEndpointScope, certify.ReqRefundReplay},
		{"refund-replays-charge", certify.ReqEndpointScope, certify.ReqRefundReplay},
		{"refund-not-idempotent", certify.ReqRefundReplay, certify.ReqEndpointScope},
	}
	for _, c := range cases {
		t.Run(c.mutant, func(t *testing.T) {
			t.Parallel()
			url := startRef(t, c.mutant, 0, 0)
			cert := certifyURL(t, url, remote.ReferenceProfile(), certify.Options{Only: []string{certify.ReqRefundReplay, certify.ReqEndpointScope}})
			v := verdicts(t, cert)
			require.Equal(t, reports.Fail, v[c.want], "requirement %s", c.want)
			assert.Equal(t, reports.Pass, v[c.other], "requirement %s", c.other)
			for _, r := range cert.Requirements {
				if r.ID == c.want {
					assert.NotEmpty(t, r.Reason)
					assert.NotEmpty(t, r.Evidence, "a FAIL carries its exchanges")
				}
			}
		})
	}
}
