package conformance_test

import (
	"testing"

	"github.com/idemcheck/idemcheck/conformance"
)

// TestConformance is the main job: the reference client against the
// embedded provider (or what IDEMCHECK_PROVIDER / IDEMCHECK_MUTANT select)
// under random fault schedules, with every invariant checked after every
// step. Run it with -v for the per-invariant summary.
func TestConformance(t *testing.T) {
	cfg, err := conformance.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	conformance.Run(t, cfg)
}
