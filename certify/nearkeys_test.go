package certify_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// A provider that folds keys to lower case and keeps their first 32
// characters (mutant normalised-key) FAILs near-duplicate-keys-distinct
// on both near keys; the reference PASSes it. Regression (breaker): a
// case-folding provider and one cutting keys to 32 characters passed a
// whole certification, since the near-key probe ran in process only.
func TestCertify_NearDuplicateKeys(t *testing.T) {
	only := certify.Options{Only: []string{certify.ReqNearKeys}}
	r := byID(certifyURL(t, startRef(t, "normalised-key", 0, 0), remote.ReferenceProfile(), only))[certify.ReqNearKeys]
	require.Equal(t, reports.Fail, r.Verdict, r.Reason)
	assert.Contains(t, r.Reason, "only in letter case answered")
	assert.Contains(t, r.Reason, "only in its last character (63 shared) answered")
	assert.NotEmpty(t, r.Evidence)

	ref := byID(certifyURL(t, startRef(t, "", 0, 0), remote.ReferenceProfile(), only))[certify.ReqNearKeys]
	assert.Equal(t, reports.Pass, ref.Verdict, ref.Reason)
}
