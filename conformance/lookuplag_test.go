package conformance_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/idemcheck/idemcheck/conformance"
	"github.com/idemcheck/idemcheck/faults"
)

// A run of the reference in process draws the lookup lag (five
// sequences in eight, faults.LookupLagFor) and shows it in its statistics,
// once per sequence that got it; the reference passes under it.
func TestLookupLagDrawnAndCounted(t *testing.T) {
	stats := conformance.Run(t, conformance.Config{ReportDir: t.TempDir()})
	n := stats.Injected(faults.KindLookupLag)
	assert.Positive(t, n, "no sequence drew a lookup lag")
	assert.LessOrEqual(t, n, stats.Sequences(), "a lookup lag is drawn once per sequence at most")
	assert.Equal(t, n, stats.Coverage().Faults[string(faults.KindLookupLag)])
	assert.Contains(t, stats.Summary(), "lookup-lag×")
}
