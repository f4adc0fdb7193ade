package certify_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// A requirement sends all of its probes and lists each failing one:
// against no-fingerprint, reused-key-other-body-refused names the amount,
// the currency and the card, in that order. Regression (issue 24, item 4):
// it returned at the amount.
func TestCertify_MismatchListsEveryVariant(t *testing.T) {
	cert := certifyURL(t, startRef(t, "no-fingerprint", 0, 0), remote.ReferenceProfile(), certify.Options{Only: []string{certify.ReqMismatch}})
	r := byID(cert)[certify.ReqMismatch]
	assert.Equal(t, reports.Fail, r.Verdict, r.Reason)
	for _, what := range []string{"amount", "currency", "card"} {
		assert.Contains(t, r.Reason, "the same key with another "+what+" answered 201", what)
	}
}

// replay-returns-first-response sends the success's replay and the
// decline's both: against replay-new-charge, each is listed. Regression
// (issue 24, item 4): it returned at the success's replay.
func TestCertify_ReplayListsTheSuccessAndTheDecline(t *testing.T) {
	cert := certifyURL(t, startRef(t, "replay-new-charge", 0, 0), remote.ReferenceProfile(), certify.Options{Only: []string{certify.ReqReplay}})
	r := byID(cert)[certify.ReqReplay]
	assert.Equal(t, reports.Fail, r.Verdict, r.Reason)
	assert.Contains(t, r.Reason, "a retry with the same key and body answered 201")
	assert.Contains(t, r.Reason, "a retried decline answered 402 with another body")
}

// A profile's "errors are stored" cannot be told over a URL when the 402
// names no decline id: a decline run again is byte-identical to its
// replay, and without a replay header (the profile publishes none) no
// answer tells them apart. replay-returns-first-response is then NOT
// JUDGED, saying so. Regression (issue 24, item 6): it PASSed the claim
// against decline-not-stored-then-charge, which stores no decline.
func TestCertify_AnUntellableErrorsStoredClaimIsNotJudged(t *testing.T) {
	prof := remote.ReferenceProfile()
	prof.ReplayHeader = "" // with one, the decline run again is told by its missing mark (FAIL)
	cert := certifyURL(t, startRef(t, "decline-not-stored-then-charge", 0, 0), prof, certify.Options{Only: []string{certify.ReqReplay}})
	r := byID(cert)[certify.ReqReplay]
	assert.Equal(t, reports.NotJudged, r.Verdict, r.Reason)
	assert.Contains(t, r.Reason, "the profile's errors_stored claim cannot be told over a URL: the 402 names no decline id")
}

// errors-are-problem-details looks at every error it provokes: against
// errors-not-problem-details, the 400 and the 422 are both listed. Regression (issue
// 24, item 4): it returned at the 400.
func TestCertify_ProblemDetailsListsEveryError(t *testing.T) {
	cert := certifyURL(t, startRef(t, "errors-not-problem-details", 0, 0), remote.ReferenceProfile(), certify.Options{Only: []string{certify.ReqProblemDetails}})
	r := byID(cert)[certify.ReqProblemDetails]
	assert.Equal(t, reports.Fail, r.Verdict, r.Reason)
	for _, what := range []string{"a malformed Idempotency-Key answered 400", "the same key with another amount answered 422"} {
		assert.Contains(t, r.Reason, what)
	}
}
