package conformance_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// A key mismatch shows the stored and the sent key side by side (issue
// 11: a reader had to dig the difference out of the JSON).
func TestReportShowsTheKeysSideBySide(t *testing.T) {
	out, failed, dir := runConformance(t, "1", "IDEMCHECK_MUTANT=fresh-key-per-request")
	require.True(t, failed, out)
	md, err := os.ReadFile(reportFile(dir, "fresh-key-per-request", "failure.md"))
	require.NoError(t, err, out)
	require.Regexp(t, `## What differs: (stored key and sent key|one intent, two keys)\n`, string(md))
	require.Regexp(t, "\\| Idempotency-Key[^|]* \\| \\*\\*`[^`]+`\\*\\* \\| \\*\\*`[^`]+`\\*\\* \\|", string(md))
}
