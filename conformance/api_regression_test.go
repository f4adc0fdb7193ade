package conformance_test

import (
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/checkout"
	"github.com/idemcheck/idemcheck/conformance"
)

// OnStart gets the *Stats that Run returns (the same pointer, as before
// the package was split by role: the public Stats wraps the run's, once
// per run). Regression: two wrappers of one run's statistics.
func TestOnStartGetsTheStatsRunReturns(t *testing.T) {
	var started *conformance.Stats
	cfg := conformance.Config{ReportDir: t.TempDir(), OnStart: func(s *conformance.Stats) { started = s }}
	got := conformance.Run(t, cfg)
	require.NotNil(t, got)
	assert.Same(t, got, started)
}

// A zero Stats reads as a run of nothing, as the struct did before it
// wrapped the run's statistics. Regression: a nil pointer dereference.
func TestZeroStatsReadsAsNothing(t *testing.T) {
	var s conformance.Stats
	assert.Equal(t, 0, s.Sequences())
	assert.Contains(t, s.Summary(), "0 sequences")
	assert.Empty(t, s.Deviations())
}

// A shard prints as IDEMCHECK_SHARD spells it. Regression: Shard.String
// was lost when Shard became the public twin of the run's.
func TestShardPrintsAsTheVariable(t *testing.T) {
	assert.Equal(t, "1/4", conformance.Shard{Index: 1, Count: 4}.String())
	assert.Equal(t, "", conformance.Shard{}.String())
}

// checkServiceNilEnv makes TestCheckServiceWithoutALauncherFails its own
// child: the call that must fail the test.
const checkServiceNilEnv = "IDEMCHECK_TEST_CHECKSERVICE_NIL"

// CheckService without a launcher fails its test with a sentence, before
// rapid runs: regression, it panicked inside rapid's first check (a nil
// pointer in the world's set-up) and left a fail file.
func TestCheckServiceWithoutALauncherFails(t *testing.T) {
	if os.Getenv(checkServiceNilEnv) == "1" {
		conformance.CheckService(t, nil)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCheckServiceWithoutALauncherFails$", "-test.v")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), checkServiceNilEnv+"=1", "IDEMCHECK_REPORT_DIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "the child passed:\n%s", out)
	assert.Contains(t, string(out), "conformance: CheckService needs a launcher (service.Launcher)")
	assert.NotContains(t, string(out), "panic")
}

// dialectEnv makes TestWithDialectRefusesWhatItCannotServe its own child:
// the dialect to ask for.
const dialectEnv = "IDEMCHECK_TEST_DIALECT"

// WithDialect refuses, before rapid runs, a dialect the embedded provider
// does not speak and Stripe's against any provider but the embedded one
// in memory: a sentence, no fail file. Regression: an unknown dialect
// failed inside rapid's first check, with a fail file and its replay line.
func TestWithDialectRefusesWhatItCannotServe(t *testing.T) {
	if d := os.Getenv(dialectEnv); d != "" {
		conformance.CheckClient(t, func(checkout.Env) (checkout.Client, error) { return nil, errors.New("never built") }, conformance.WithDialect(d))
		return
	}
	for _, c := range []struct{ dialect, provider, want string }{
		{"soap", "", `conformance: unknown dialect "soap" (want "reference" or "stripe")`},
		{"stripe", "wiremock", `conformance: the stripe dialect is served by the embedded provider in memory only, not provider "wiremock"`},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestWithDialectRefusesWhatItCannotServe$", "-test.v")
		cmd.Dir = t.TempDir()
		cmd.Env = append(os.Environ(), dialectEnv+"="+c.dialect, "IDEMCHECK_PROVIDER="+c.provider, "IDEMCHECK_REPORT_DIR="+t.TempDir())
		out, err := cmd.CombinedOutput()
		require.Error(t, err, "the child passed:\n%s", out)
		assert.Contains(t, string(out), c.want)
		assert.NotContains(t, string(out), "[rapid]")
	}
}
