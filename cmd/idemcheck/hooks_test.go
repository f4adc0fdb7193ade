package main_test

import (
	"strings"
	"testing"
)

// TestCertifyRefusesAnUnusableHook: a hook given by flag, variable or
// profile reaches the run's settings, and one that cannot be split into
// an argv (an unclosed quote, an empty or blank command), or a hook
// timeout that is not a positive duration or is below 100 ms, is refused before any request (exit 2), naming it.
func TestCertifyRefusesAnUnusableHook(t *testing.T) {
	for _, c := range []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{"--hook-restart", "sh -c 'unclosed"}, "hook restart: unclosed single quote"},
		{[]string{"IDEMCHECK_HOOK_STORE_DOWN=redis-cli \"shutdown"}, nil, "hook store_down: unclosed double quote"},
		{[]string{"IDEMCHECK_HOOK_TIMEOUT=-1s"}, nil, "IDEMCHECK_HOOK_TIMEOUT=\"-1s\" is not a positive Go duration"},
		{nil, []string{"--hook-timeout", "0s"}, "invalid value \"0s\" for flag -hook-timeout"},
		{nil, []string{"--hook-restart", ""}, "hook restart: empty command"},
		{nil, []string{"--hook-restart", "   "}, "hook restart: empty command"},
		{nil, []string{"--hook-store-up", ""}, "hook store_up: empty command"},
		{nil, []string{"--hook-timeout", "1ns"}, "hook timeout 1ns is below 100ms"},
		{[]string{"IDEMCHECK_HOOK_TIMEOUT=50ms"}, nil, "hook timeout 50ms is below 100ms"},
	} {
		args := append(append([]string{"certify"}, c.args...), "--report-dir", t.TempDir(), "http://127.0.0.1:1")
		code, _, stderr := idemcheck(t, c.env, args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v %v: exit %d, want 2 saying %q; stderr:\n%s", c.env, c.args, code, c.want, stderr)
		}
	}
}
