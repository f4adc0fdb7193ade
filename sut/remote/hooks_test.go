package remote_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// TestSplitCommandHasNoShell: a hook's command line is split into words
// with quotes and backslashes and nothing else: no variable, glob, pipe
// or separator means anything.
func TestSplitCommandHasNoShell(t *testing.T) {
	for line, want := range map[string][]string{
		`docker compose restart payments`:           {"docker", "compose", "restart", "payments"},
		`sh -c 'kill -9 $(cat pid); ./serve &'`:     {"sh", "-c", "kill -9 $(cat pid); ./serve &"},
		`echo "a \"b\" \\ c" $HOME; rm -rf * | tee`: {"echo", `a "b" \ c`, "$HOME;", "rm", "-rf", "*", "|", "tee"},
		`  a\ b   ''  "" c`:                         {"a b", "", "", "c"},
		"systemctl\trestart\npayments.service":      {"systemctl", "restart", "payments.service"},
		`toxiproxy-cli toggle redis`:                {"toxiproxy-cli", "toggle", "redis"},
	} {
		got, err := remote.SplitCommand(line)
		require.NoError(t, err, line)
		assert.Equal(t, want, got, line)
	}
	for _, bad := range []string{"", "   ", `sh -c 'unclosed`, `echo "unclosed`} {
		_, err := remote.SplitCommand(bad)
		assert.Error(t, err, bad)
	}
}

// TestRunHookKeepsScrubbedOutput: a hook's output is kept, with a
// registered secret redacted; its argument is passed as written (no
// shell: $HOME stays $HOME); a non-zero exit is an error saying so.
func TestRunHookKeepsScrubbedOutput(t *testing.T) {
	reports.RegisterSecret("sk_test_hookSECRET0123456789", "[redacted]")
	run, err := remote.RunHook(t.Context(), "restart", `sh -c 'echo "$0 $1"; echo sk_test_hookSECRET0123456789 >&2' '$HOME' x`, 0)
	require.NoError(t, err)
	assert.Equal(t, "$HOME x\n", run.Stdout)
	assert.Equal(t, "[redacted]\n", run.Stderr)
	assert.Equal(t, 0, run.ExitCode)
	run, err = remote.RunHook(t.Context(), "store_down", `sh -c 'exit 3'`, 0)
	require.Error(t, err)
	assert.Equal(t, 3, run.ExitCode)
	assert.Contains(t, err.Error(), "hook store_down (sh -c exit 3) failed: exit status 3")
	_, err = remote.RunHook(t.Context(), "store_up", "/nonexistent/hook", 0)
	assert.ErrorContains(t, err, "could not start")
}

// TestRunHookTimeoutKillsItsGroup: at its timeout a hook and what it
// started in its process group are killed, and the error says so; a
// background child holding the output pipes does not hold the run.
func TestRunHookTimeoutKillsItsGroup(t *testing.T) {
	pids := filepath.Join(t.TempDir(), "pids")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	run, err := remote.RunHook(ctx, "restart", `sh -c 'echo $$ > `+pids+`; sleep 600 & echo $! >> `+pids+`; wait'`, 500*time.Millisecond)
	require.Error(t, err)
	assert.Contains(t, run.Error, "timed out after 500ms; its process group was killed")
	b, err := os.ReadFile(pids)
	require.NoError(t, err)
	for _, p := range strings.Fields(string(b)) {
		st, err := os.ReadFile("/proc/" + p + "/stat")
		if err == nil { // gone, or a zombie waiting for its parent
			s := string(st)
			assert.Equal(t, byte('Z'), s[strings.LastIndexByte(s, ')')+2], "process %s left running", p)
		}
	}
}

// TestProfileLifecycle: the profile's lifecycle fields are read, and a
// restart_keeps or hook that cannot be used is refused.
func TestProfileLifecycle(t *testing.T) {
	p, err := remote.ParseProfile([]byte(`{"name":"x","lifecycle":{"lease":"30s","restart_keeps":"nothing","hooks":{"restart":"docker compose restart payments","timeout":"90s"}}}`))
	require.NoError(t, err)
	assert.Equal(t, remote.Span(30*time.Second), p.Lifecycle.Lease)
	assert.False(t, p.Lifecycle.KeepsKeys())
	assert.Equal(t, "docker compose restart payments", p.Lifecycle.Hooks.Restart)
	assert.Equal(t, remote.Span(90*time.Second), p.Lifecycle.Hooks.Timeout)
	for _, bad := range []string{
		`{"name":"x","lifecycle":{"restart_keeps":"keys"}}`,
		`{"name":"x","lifecycle":{"lease":"0s"}}`,
		`{"name":"x","lifecycle":{"hooks":{"restart":"sh -c 'oops"}}}`,
		`{"name":"x","lifecycle":{"hooks":{"reboot":"x"}}}`,
	} {
		_, err := remote.ParseProfile([]byte(bad))
		assert.Error(t, err, bad)
	}
}
