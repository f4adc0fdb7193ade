package conformance

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// childLines runs TestConformance in a child of this test binary, in
// process (the embedded provider, memory stores), against mutant ("" for
// the reference) with seed and checks and env added, the child writing
// the file its hook variable (hookEnv) names; it returns that file's
// lines, whether the child failed, and its output.
func childLines(t *testing.T, hookEnv, mutant, seed string, checks int, env ...string) (lines []string, failed bool, out string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "lines.txt")
	cmd := exec.Command(os.Args[0], "-test.run=^TestConformance$", "-rapid.seed="+seed, fmt.Sprintf("-rapid.checks=%d", checks))
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "IDEMCHECK_PROVIDER=embedded", "IDEMCHECK_PROVIDER_STORE=memory", "IDEMCHECK_MUTANT="+mutant,
		"IDEMCHECK_REPORT_DIR="+filepath.Join(dir, "reports"), "GITHUB_STEP_SUMMARY=", "IDEMCHECK_REPRODUCE=0", hookEnv+"="+path), env...)
	b, err := cmd.CombinedOutput()
	if err != nil {
		_, exit := err.(*exec.ExitError)
		require.True(t, exit, "running the child: %v\n%s", err, b)
		failed = true
	}
	data, err := os.ReadFile(path)
	require.NoError(t, err, "the child wrote nothing to %s:\n%s", hookEnv, b)
	return strings.Split(strings.TrimSpace(string(data)), "\n"), failed, string(b)
}

// lineFile appends lines to the file at path, each flushed as written;
// safe for concurrent use (a child's hooks run on the property's
// goroutines). It panics when the file cannot be opened: a child set up
// wrongly.
func lineFile(path string) func(format string, args ...any) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		panic(err)
	}
	var mu sync.Mutex
	out := bufio.NewWriter(f)
	return func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, format+"\n", args...)
		_ = out.Flush()
	}
}
