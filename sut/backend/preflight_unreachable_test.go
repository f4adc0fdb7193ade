package backend

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/sut/remote"
)

// Regression (issue 13): a URL where nothing listens stopped the property
// with "does not answer find-by-reference in the dialect … check
// IDEMCHECK_DIALECT"; it says the provider is unreachable.
func TestPreflightNamesAnUnreachableProvider(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	url := "http://" + l.Addr().String()
	require.NoError(t, l.Close())
	p, err := remote.New(remote.Config{BaseURL: url, Limits: remote.Limits{MaxDuration: time.Minute}})
	require.NoError(t, err)
	err = Preflight(p)
	require.ErrorContains(t, err, "idemcheck: provider unreachable at "+url+": ")
	assert.ErrorContains(t, err, "connection refused")
	assert.NotContains(t, err.Error(), "dialect")
}
