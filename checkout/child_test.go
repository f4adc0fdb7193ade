package checkout_test

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// childVar selects, in a child process of a test of this package, the
// run that test makes there (a run that must fail cannot fail the test
// itself).
const childVar = "IDEMCHECK_TEST_CHILD"

// inChild reports whether this process is the child of test.
func inChild(test string) bool { return os.Getenv(childVar) == test }

// runChild runs test again in a child process with env (on top of a run
// against the embedded provider, its reports in a temporary folder),
// bounded by limit, and returns its output and whether it failed.
func runChild(t *testing.T, test string, limit time.Duration, env ...string) (out string, failed bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+test+"$", "-test.v", "-rapid.seed=1")
	cmd.Env = append(append(os.Environ(), childVar+"="+test, "IDEMCHECK_REPORT_DIR="+t.TempDir(), "IDEMCHECK_PROVIDER=",
		"IDEMCHECK_MUTANT=", "GITHUB_STEP_SUMMARY=", "IDEMCHECK_REPRODUCE=0"), env...)
	cmd.Dir = t.TempDir() // rapid's fail file lands there, not in the package
	b, err := cmd.CombinedOutput()
	require.NoError(t, ctx.Err(), "the child did not end within %v; output:\n%s", limit, b)
	if err != nil {
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit, "output:\n%s", b)
		failed = true
	}
	return string(b), failed
}
