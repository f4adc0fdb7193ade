package certify_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// closedPort is a loopback URL nobody listens on: a port the kernel gave
// this test, closed again.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	url := "http://" + l.Addr().String()
	require.NoError(t, l.Close())
	return url
}

// Regression (issue 13): a URL where nothing listens was reported as a
// wrong dialect (ErrDialect, "check IDEMCHECK_PROVIDER and
// IDEMCHECK_DIALECT"). It is ErrUnreachable now: every requirement
// INCONCLUSIVE, saying the provider is unreachable, and nothing else sent.
func TestCertify_AClosedPortIsUnreachableNotAWrongDialect(t *testing.T) {
	t.Parallel() // it waits out the preflight's three tries (3 s)
	url := closedPort(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cert, err := certify.Certify(ctx, remote.Config{BaseURL: url, APIKey: testKey, Profile: remote.ReferenceProfile(),
		Limits: remote.Limits{MaxDuration: time.Minute}}, certify.Options{RequestTimeout: 30 * time.Second})
	require.ErrorIs(t, err, certify.ErrUnreachable)
	assert.NotErrorIs(t, err, certify.ErrDialect)
	assert.True(t, strings.HasPrefix(err.Error(), "certify: provider unreachable at "+url+": "), err.Error())
	assert.Contains(t, err.Error(), "connection refused")
	assert.NotContains(t, err.Error(), "dialect")
	require.Len(t, cert.Requirements, len(certify.Requirements()))
	for _, r := range cert.Requirements {
		assert.Equal(t, reports.Inconclusive, r.Verdict, r.ID)
		assert.Contains(t, r.Reason, "provider unreachable", r.ID)
	}
	assert.Equal(t, reports.Inconclusive, cert.Overall())
}
