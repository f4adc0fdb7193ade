package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/reports"
)

// TestRapidLogIsScrubbed: rapid.log goes through reports.Scrub like every
// other file of the run folder, whatever reached the harness's log
// (regression, outside tester: it was copied byte for byte, its safety
// resting on the wire having scrubbed everything first).
func TestRapidLogIsScrubbed(t *testing.T) {
	const secret = "sk_test_RAPIDLOGSECRET123456"
	reports.RegisterSecret(secret, "[redacted]")
	l, err := newTestLog(false)
	require.NoError(t, err)
	_, err = l.out().WriteString("    actions.go:1: an answer echoed " + secret + " and " + strings.ToUpper(secret) + "\n")
	require.NoError(t, err)
	dir := t.TempDir()
	var stderr bytes.Buffer
	l.keep(dir, true, &stderr)
	b, err := os.ReadFile(filepath.Join(dir, logFile))
	require.NoError(t, err, stderr.String())
	require.NotContains(t, strings.ToLower(string(b)), strings.ToLower(secret))
	require.Contains(t, string(b), "[redacted]")
}
