package conformance_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Regression (issue 13): a passing main job printed its statistics but not
// where its summary and the index were written.
func TestConformance_APassingRunSaysWhereItsSummaryIs(t *testing.T) {
	out, failed, dir := runConformance(t, "1", "RAPID_CHECKS=5")
	require.False(t, failed, out)
	summary := reportFile(dir, "", "summary.md")
	require.FileExists(t, summary)
	assert.Contains(t, out, "summary: "+summary+"\n")
	assert.Contains(t, out, "index:   "+filepath.Join(dir, "index.md")+"\n")
}
