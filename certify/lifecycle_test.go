package certify_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/provider/server"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// TestLifecycleReferenceOnRedisPasses: refprovider -store redis on its own
// redis-server, restarted (kill -9 and start again over the same prefix)
// and its store stopped and started by the hooks, PASSes every lifecycle
// requirement; every hook's run is kept.
func TestLifecycleReferenceOnRedisPasses(t *testing.T) {
	r := startRedis(t)
	p := startProvider(t, r, "-processing", "500ms", "-lease", "2s")
	cert := certifyHooks(t, p.url, lifecycleProfile(2*time.Second), remote.Hooks{Restart: p.restart, StoreDown: r.down, StoreUp: r.up}, lifecycleIDs...)
	v := verdicts(t, cert)
	for _, id := range lifecycleIDs {
		assert.Equal(t, reports.Pass, v[id], "%s: %s", id, reasonOf(cert, id))
	}
	names := []string{}
	for _, h := range cert.Hooks {
		names = append(names, h.Name+"/"+h.For)
		assert.Empty(t, h.Error)
	}
	assert.Equal(t, []string{
		"restart/" + certify.ReqRestartHeld, "restart/" + certify.ReqRestartOnce,
		"store_down/" + certify.ReqOutageRefused, "store_up/" + certify.ReqOutageRefused,
		"store_down/" + certify.ReqOutageReplayed, "store_up/" + certify.ReqOutageReplayed,
	}, names)
}

// TestLifecycleRedisMutantsFail: each redis- mutant served the same way
// FAILs the lifecycle requirement that shows it, with evidence.
func TestLifecycleRedisMutantsFail(t *testing.T) {
	for _, c := range []struct {
		mutant, processing, req, reason string
	}{
		// The restart comes 400 ms into a 2 s create, so that on a busy
		// machine the create has taken its key before the provider is
		// killed (one run in four, at 100 ms into 1 s under -race, the
		// restart came first and the key was never held: PASS).
		{"redis-lock-is-response-ttl", "2s", certify.ReqRestartHeld, "beyond the published lease of 2s"},
		{"redis-lease-too-short", "600ms", certify.ReqSlowCreate, "one key charged 2 times"},
		{"redis-get-then-set", "300ms", certify.ReqSlowCreate, "one key charged 2 times"},
		{"redis-process-without-lock", "3s", certify.ReqOutageRefused, "one key charged 2 times across a store outage"},
	} {
		t.Run(c.mutant, func(t *testing.T) {
			r := startRedis(t)
			p := startProvider(t, r, "-mutant", c.mutant, "-processing", c.processing, "-lease", "2s")
			cert := certifyHooksWith(t, p.url, lifecycleProfile(2*time.Second), remote.Hooks{Restart: p.restart, StoreDown: r.down, StoreUp: r.up},
				certify.Options{Only: []string{c.req}, RestartAfter: 400 * time.Millisecond})
			v := verdicts(t, cert)
			logEvidence(t, cert, c.req)
			require.Equal(t, reports.Fail, v[c.req], reasonOf(cert, c.req))
			assert.Contains(t, reasonOf(cert, c.req), c.reason)
			for _, res := range cert.Requirements {
				if res.ID == c.req {
					assert.NotEmpty(t, res.Evidence)
				}
			}
			certify.Explain(&cert)
			require.Len(t, cert.Causes, 1)
			want := reports.ChargesTwice
			if c.req == certify.ReqRestartHeld {
				want = reports.LosesPayment // a key held past its lease blocks the payment
			}
			assert.Equal(t, want, cert.Causes[0].Severity)
		})
	}
}

// TestLifecycleStoreDownAnswered500Fails: a loopback provider that
// answers 500 without Retry-After while its store is down (the hooks
// toggle a file) FAILs store-outage-refused.
func TestLifecycleStoreDownAnswered500Fails(t *testing.T) {
	dir := t.TempDir()
	h, err := server.Handler("", time.Hour, 0)
	require.NoError(t, err)
	s, err := server.Start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := os.Stat(filepath.Join(dir, "store-down")); err == nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"error":"redis: connection refused"}`))
			return
		}
		h.ServeHTTP(w, r)
	}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	exe, err := os.Executable()
	require.NoError(t, err)
	hook := func(name string) string {
		return "env IDEMCHECK_TEST_HOOK=" + name + " IDEMCHECK_TEST_DIR=" + dir + " " + exe
	}
	cert := certifyHooks(t, s.URL, lifecycleProfile(time.Second), remote.Hooks{StoreDown: hook("store-down"), StoreUp: hook("store-up")}, certify.ReqOutageRefused)
	v := verdicts(t, cert)
	require.Equal(t, reports.Fail, v[certify.ReqOutageRefused])
	assert.Contains(t, reasonOf(cert, certify.ReqOutageRefused), "was answered 500, not 503 with Retry-After")
	certify.Explain(&cert)
	require.Len(t, cert.Causes, 1)
	assert.NotEqual(t, reports.ChargesTwice, cert.Causes[0].Severity, "one charge: a status-only cause")
}

// TestLifecycleHangingHookIsInconclusive: a restart hook that hangs (a
// shell and the sleep it started) is killed, process group and all, at
// its timeout: the requirements that need it are INCONCLUSIVE saying so,
// the hook is not run a second time, and none of its processes is left
// running.
func TestLifecycleHangingHookIsInconclusive(t *testing.T) {
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	url := startRef(t, "", time.Hour, 0)
	hook := `sh -c 'echo $$ >> ` + pids + `; sleep 600 & echo $! >> ` + pids + `; wait'`
	cert := certifyHooks(t, url, lifecycleProfile(time.Second), remote.Hooks{Restart: hook, Timeout: remote.Span(time.Second)}, certify.ReqRestartHeld, certify.ReqRestartOnce)
	v := verdicts(t, cert)
	assert.Equal(t, reports.Inconclusive, v[certify.ReqRestartHeld])
	assert.Contains(t, reasonOf(cert, certify.ReqRestartHeld), "timed out after 1s; its process group was killed")
	assert.Equal(t, reports.Inconclusive, v[certify.ReqRestartOnce])
	assert.Contains(t, reasonOf(cert, certify.ReqRestartOnce), "timed out after 1s; its process group was killed earlier in this run; not run again")
	require.Len(t, cert.Hooks, 1)
	b, err := os.ReadFile(pids)
	require.NoError(t, err)
	started := strings.Fields(string(b))
	require.Len(t, started, 2, "the shell and its sleep")
	for _, p := range started {
		pid, err := strconv.Atoi(p)
		require.NoError(t, err)
		assert.False(t, running(pid), "process %d of the hook is still running", pid)
	}
}

// running reports whether pid is a live process (not gone, not a zombie
// waiting for its parent).
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
