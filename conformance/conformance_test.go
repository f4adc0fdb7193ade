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
	if cfg.Mutant == "" {
		conformance.Run(t, cfg)
		return
	}
	// A subtest per mutant keeps rapid's fail files, which every later run
	// of the same test replays first, apart from the reference's and from
	// other mutants'.
	t.Run(cfg.Mutant, func(t *testing.T) { conformance.Run(t, cfg) })
}
