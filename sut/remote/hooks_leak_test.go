package remote_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// TestRunHookCutKeepsNoKeyPrefix: a key that straddles the 64 KiB cut of
// a hook's output leaves no prefix of itself (4 bytes or more) in what is
// kept, on stdout or stderr, for each of the run's keys (both accounts').
// Before the fix, 65515 bytes of padding then the key kept its first 21
// bytes.
func TestRunHookCutKeepsNoKeyPrefix(t *testing.T) {
	keys := []string{"sk_test_BRKSECRETKEY42", "sk_test_BRKSECONDACCOUNT7"}
	for _, k := range keys {
		reports.RegisterSecret(k, "[redacted]")
	}
	for _, key := range keys {
		for _, pad := range []int{65536 - len(key) + 1, 65536 - 4, 65536 - 1, 65536 - 10} {
			cmd := `sh -c 'head -c ` + strconv.Itoa(pad) + ` /dev/zero | tr "\0" x; printf %s "$K"; head -c ` + strconv.Itoa(pad) + ` /dev/zero | tr "\0" x >&2; printf %s "$K" >&2' `
			t.Setenv("K", key)
			run, err := remote.RunHook(t.Context(), "restart", cmd, 0)
			require.NoError(t, err)
			for _, out := range []string{run.Stdout, run.Stderr} {
				kept := strings.TrimRight(out[:strings.LastIndex(out, "\n[")], "x")
				for n := 4; n <= len(key); n++ {
					assert.False(t, strings.HasSuffix(kept, key[:n]), "key %s, pad %d: %q kept at the cut", key, pad, key[:n])
				}
				assert.Contains(t, out, "more bytes not kept]")
			}
		}
	}
}

// TestRunHookLeavesNoGroup: what a hook leaves running in its process
// group once it exits is killed before RunHook returns (docs/providers.md:
// a process a hook means to keep, such as a restarted provider, detaches
// with setsid); a process it detached survives.
func TestRunHookLeavesNoGroup(t *testing.T) {
	pidf := filepath.Join(t.TempDir(), "pids")
	run, err := remote.RunHook(t.Context(), "restart", `sh -c 'echo $$ > `+pidf+`; sleep 333 & sleep 334 > /dev/null 2>&1 & setsid sleep 335 > /dev/null 2>&1 & echo $! >> `+pidf+`; echo forked; exit 0'`, 0)
	require.NoError(t, err)
	assert.Equal(t, "forked\n", run.Stdout)
	b, err := os.ReadFile(pidf)
	require.NoError(t, err)
	f := strings.Fields(string(b))
	require.Len(t, f, 2)
	pgid, _ := strconv.Atoi(f[0])
	detached, _ := strconv.Atoi(f[1])
	defer func() { _ = syscall.Kill(detached, syscall.SIGKILL) }()
	assert.Equal(t, 0, groupMembers(t, pgid), "processes of the hook's group %d left running", pgid)
	assert.NoError(t, syscall.Kill(detached, 0), "the detached process was killed")
}

// TestHookFaultLeavesNoGroup: the property's store-down hook (RunHookFault)
// that sends a child to the background leaves nothing of its group
// running once it returns; before the fix one sleep per run was left.
func TestHookFaultLeavesNoGroup(t *testing.T) {
	pidf := filepath.Join(t.TempDir(), "pid")
	p, err := remote.New(remote.Config{BaseURL: "http://127.0.0.1:9", APIKey: hostileKey,
		Hooks: remote.Hooks{StoreDown: `sh -c 'echo $$ > ` + pidf + `; sleep 336 > /dev/null 2>&1 & exit 0'`, StoreUp: "true"}, Limits: remote.Limits{MaxDuration: time.Minute}})
	require.NoError(t, err)
	require.True(t, p.TakeHookFault("store_down", "store_up"))
	require.NoError(t, p.RunHookFault(t.Context(), "store_down"))
	b, err := os.ReadFile(pidf)
	require.NoError(t, err)
	pgid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	assert.Equal(t, 0, groupMembers(t, pgid), "processes of the store-down hook's group %d left running", pgid)
}

// groupMembers counts the processes of group pgid that are not zombies.
func groupMembers(t *testing.T, pgid int) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	n := 0
	for _, e := range entries {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 2 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			n++
		}
	}
	return n
}
