// Package childfail runs one test of the running test binary in a child
// process that must fail, and reads the failure report it wrote: how the
// examples' tests show a planted mistake caught (examples/checkout-service,
// examples/stripe-go, examples/stripe-node) without failing themselves.
package childfail

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Report is what the examples' tests read of a child's failure.json
// (reports.Failure): the invariant it broke, the counterexample's shopper
// steps, and the folder holding the report, its curl script beside it.
type Report struct {
	Invariant string `json:"invariant"`
	StepCount int    `json:"step_count"`
	Dir       string `json:"-"`
}

// Run runs the test named by the -test.run pattern run of this test
// binary, with the extra flags args, in a child process whose
// environment is this one's plus env, its reports in a fresh temporary
// folder (IDEMCHECK_REPORT_DIR) with no provider, mutant, step summary or
// reproduction of the parent's; the child's folder is that one too. t
// fails unless the child fails and writes exactly one failure report of
// test. It returns the report and the child's output.
func Run(t *testing.T, run string, args []string, env ...string) (Report, string) {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^" + run + "$"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "IDEMCHECK_REPORT_DIR="+dir, "IDEMCHECK_PROVIDER=", "IDEMCHECK_MUTANT=",
		"GITHUB_STEP_SUMMARY=", "IDEMCHECK_REPRODUCE=0"), env...)
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "the child passed:\n%s", out)
	files, _ := filepath.Glob(filepath.Join(dir, "*-"+run, "failure.json"))
	require.Len(t, files, 1, "a failing run writes one JSON report; output:\n%s", out)
	raw, err := os.ReadFile(files[0])
	require.NoError(t, err)
	rep := Report{Dir: filepath.Dir(files[0])}
	require.NoError(t, json.Unmarshal(raw, &rep))
	return rep, string(out)
}
