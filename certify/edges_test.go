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

// edgeIDs are issue 25's requirements of bodies, keyed lookups, the
// in-flight hint, stray headers and a slow request (certify/edges.go).
var edgeIDs = []string{certify.ReqUnparsableBody, certify.ReqLargeBody, certify.ReqBodyLimit, certify.ReqKeyedLookup,
	certify.ReqInflightHint, certify.ReqStrayHeaders, certify.ReqSlowRequest}

// The reference provider passes every one of them with its profile
// (max_body_bytes and the slow trigger published), with no processing
// delay and with one: the in-flight hint then comes from the hold
// barrier, without it from the slow trigger.
func TestCertify_EdgeRequirementsPassOnTheReference(t *testing.T) {
	for _, processing := range []time.Duration{0, 300 * time.Millisecond} {
		t.Run(processing.String(), func(t *testing.T) {
			t.Parallel()
			cert := certifyURL(t, startRef(t, "", 0, processing), remote.ReferenceProfile(), certify.Options{Only: edgeIDs})
			verdicts(t, cert)
			got := byID(cert)
			for _, id := range edgeIDs {
				assert.Equal(t, reports.Pass, got[id].Verdict, "%s: %s", id, got[id].Reason)
			}
		})
	}
}

// Each mutant of sut/mutants/body_mutants.go, served by refprovider's
// handler, fails the requirement it names (Mutant.Requirement), with the
// reason and the exchanges that show it.
func TestCertify_EdgeMutantsFailTheirRequirement(t *testing.T) {
	for _, c := range []struct {
		mutant, want, says string
		timeout            time.Duration
	}{
		{mutant: "unparsable-body-holds-key", want: certify.ReqUnparsableBody, says: "left the key taken"},
		{mutant: "fingerprint-prefix-only", want: certify.ReqLargeBody, says: "the fingerprint does not cover the whole body"},
		{mutant: "keyed-lookup-cached", want: certify.ReqKeyedLookup, says: "answered from an idempotency cache"},
		{mutant: "inflight-409-no-retry-after", want: certify.ReqInflightHint, says: "carried no Retry-After"},
		{mutant: "stray-header-hangs", want: certify.ReqStrayHeaders, says: "no response (timeout)", timeout: 2 * time.Second},
		{mutant: "lock-expires-mid-processing", want: certify.ReqSlowRequest, says: "found 2 charges"},
	} {
		t.Run(c.mutant, func(t *testing.T) {
			t.Parallel()
			cert := certifyURL(t, startRef(t, c.mutant, 0, 0), remote.ReferenceProfile(), certify.Options{Only: []string{c.want}, RequestTimeout: c.timeout})
			verdicts(t, cert)
			r := byID(cert)[c.want]
			require.Equal(t, reports.Fail, r.Verdict, "%s: %s", c.want, r.Reason)
			assert.Contains(t, r.Reason, c.says)
			assert.NotEmpty(t, r.Evidence, "a FAIL carries its exchanges")
		})
	}
}

// Without max_body_bytes or a slow trigger in the profile, the two
// requirements that need them are NOT JUDGED with that reason, never
// PASS, and send nothing.
func TestCertify_EdgeClaimsNotPublishedAreNotJudged(t *testing.T) {
	prof := remote.ReferenceProfile()
	prof.MaxBodyBytes, prof.SlowTrigger = 0, nil
	cert := certifyURL(t, startRef(t, "", 0, 0), prof, certify.Options{Only: []string{certify.ReqBodyLimit, certify.ReqSlowRequest}})
	got := byID(cert)
	assert.Equal(t, reports.NotJudged, got[certify.ReqBodyLimit].Verdict)
	assert.Contains(t, got[certify.ReqBodyLimit].Reason, "publishes no max_body_bytes")
	assert.Equal(t, reports.NotJudged, got[certify.ReqSlowRequest].Verdict)
	assert.Contains(t, got[certify.ReqSlowRequest].Reason, "publishes no slow_trigger")
	for _, id := range []string{certify.ReqBodyLimit, certify.ReqSlowRequest} {
		assert.Zero(t, postsIn(got[id].Evidence), id)
	}
}

// stray-headers-ignored compares the stray request with its replay: a
// provider that charges every replay again fails it for that, not for
// the headers, so with that cause it is NOT JUDGED because of it (as
// the other requirements that need a replay are).
func TestCertify_StrayHeadersNeedAReplay(t *testing.T) {
	cert := certifyURL(t, startRef(t, "replay-new-charge", 0, 0), remote.ReferenceProfile(), certify.Options{Only: []string{certify.ReqReplay, certify.ReqStrayHeaders}})
	certify.Explain(&cert)
	r := byID(cert)[certify.ReqStrayHeaders]
	assert.Equal(t, reports.NotJudged, r.Verdict, r.Reason)
	assert.Contains(t, r.Reason, "because of "+certify.CauseReplayChargesAgain)
}
