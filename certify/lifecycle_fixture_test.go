package certify_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// The lifecycle tests drive real parts: cmd/refprovider (built once) with
// -store redis on a redis-server of the test's own (127.0.0.1, a free
// port, its data in the test's folder, persisted with appendonly so that
// a stop and start keeps it). The hooks are command lines as a provider
// team writes them: redis-cli shutdown / redis-server for the store, and
// this test binary itself as "a plain process" supervisor for the restart
// (env IDEMCHECK_TEST_HOOK=restart: kill -9 the provider, start it again
// on the same address over the same prefix).

// TestMain runs the helper hooks when the binary is started as one.
func TestMain(m *testing.M) {
	switch os.Getenv("IDEMCHECK_TEST_HOOK") {
	case "":
		code := m.Run()
		if refproviderBin != "" {
			_ = os.RemoveAll(filepath.Dir(refproviderBin)) // the binary refprovider built
		}
		os.Exit(code)
	case "restart":
		os.Exit(hookRestart(os.Getenv("IDEMCHECK_TEST_DIR")))
	case "store-down":
		os.Exit(hookFile(os.Getenv("IDEMCHECK_TEST_DIR"), true))
	case "store-up":
		os.Exit(hookFile(os.Getenv("IDEMCHECK_TEST_DIR"), false))
	}
	os.Exit(2)
}

// hookRestart kills the provider whose pid is in dir/pid (SIGKILL: a
// crash, nothing flushed), waits until its address is free (at most 10 s)
// and starts it again, detached, with the argv in dir/serve.json.
func hookRestart(dir string) int {
	var argv []string
	b, err := os.ReadFile(filepath.Join(dir, "serve.json"))
	if err == nil {
		err = json.Unmarshal(b, &argv)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "restart hook:", err)
		return 1
	}
	if pid, err := readPid(dir); err == nil {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	addr := argv[len(argv)-1]
	for i := 0; ; i++ { // the old process holds the port until it is gone
		ln, err := net.Listen("tcp", addr)
		if err == nil {
			_ = ln.Close()
			break
		}
		if i == 200 {
			fmt.Fprintln(os.Stderr, "restart hook: the address stays taken:", err)
			return 1
		}
		time.Sleep(50 * time.Millisecond) // a helper process, bounded by the hook's timeout
	}
	if err := startDetached(dir, argv); err != nil {
		fmt.Fprintln(os.Stderr, "restart hook:", err)
		return 1
	}
	fmt.Println("restarted", addr)
	return 0
}

// hookFile creates (down) or removes dir/store-down: the flag of
// downServer's store.
func hookFile(dir string, down bool) int {
	p := filepath.Join(dir, "store-down")
	if down {
		return boolCode(os.WriteFile(p, nil, 0o644) == nil)
	}
	return boolCode(os.Remove(p) == nil)
}

func boolCode(ok bool) int {
	if ok {
		return 0
	}
	return 1
}

func readPid(dir string) (int, error) {
	b, err := os.ReadFile(filepath.Join(dir, "pid"))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// startDetached starts argv in a session of its own, its output to
// dir/serve.log, and writes its pid to dir/pid; it is not waited for.
func startDetached(dir string, argv []string) error {
	log, err := os.OpenFile(filepath.Join(dir, "serve.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	c := exec.Command(argv[0], argv[1:]...)
	c.Stdout, c.Stderr = log, log
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := c.Start(); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "pid"), []byte(strconv.Itoa(c.Process.Pid)), 0o644)
}

var (
	refproviderOnce sync.Once
	refproviderBin  string
	refproviderErr  error
)

// refprovider builds cmd/refprovider once per test binary.
func refprovider(t *testing.T) string {
	t.Helper()
	refproviderOnce.Do(func() {
		dir, err := os.MkdirTemp("", "idemcheck-lifecycle-")
		if err != nil {
			refproviderErr = err
			return
		}
		refproviderBin = filepath.Join(dir, "refprovider")
		if out, err := exec.Command("go", "build", "-o", refproviderBin, "../cmd/refprovider").CombinedOutput(); err != nil {
			refproviderErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	require.NoError(t, refproviderErr)
	return refproviderBin
}

// freeAddr is a free loopback address (127.0.0.1:port).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// redisFixture is a redis-server of the test's own and the hooks that
// stop and start it.
type redisFixture struct {
	port, url     string
	down, up      string // the store hooks' command lines
	dir, confPath string
}

// startRedis starts redis-server on a free port, persisted (appendonly,
// fsync always) in the test's folder; it is shut down when t ends.
func startRedis(t *testing.T) redisFixture {
	t.Helper()
	dir := t.TempDir()
	_, port, _ := net.SplitHostPort(freeAddr(t))
	conf := fmt.Sprintf("port %s\nbind 127.0.0.1\ndir %s\nappendonly yes\nappendfsync always\nsave \"\"\ndaemonize yes\npidfile %s\nlogfile %s\n",
		port, dir, filepath.Join(dir, "redis.pid"), filepath.Join(dir, "redis.log"))
	confPath := filepath.Join(dir, "redis.conf")
	require.NoError(t, os.WriteFile(confPath, []byte(conf), 0o644))
	f := redisFixture{port: port, url: "redis://127.0.0.1:" + port + "/0", dir: dir, confPath: confPath,
		down: "redis-cli -p " + port + " shutdown", up: "redis-server " + confPath}
	out, err := exec.Command("redis-server", confPath).CombinedOutput()
	require.NoError(t, err, "%s", out)
	t.Cleanup(func() { f.stop(t) })
	f.wait(t)
	return f
}

// wait waits until redis answers PING (redis-cli, at most 50 tries).
func (f redisFixture) wait(t *testing.T) {
	t.Helper()
	for i := 0; i < 50; i++ {
		out, _ := exec.Command("redis-cli", "-p", f.port, "ping").Output()
		if strings.TrimSpace(string(out)) == "PONG" {
			return
		}
		time.Sleep(100 * time.Millisecond) // redis-server offers no readiness signal to wait on
	}
	t.Fatalf("redis-server on %s does not answer PING", f.port)
}

// stop kills the redis-server by its pid file, if it runs.
func (f redisFixture) stop(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(f.dir, "redis.pid"))
	if err != nil {
		return
	}
	if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// providerFixture is refprovider -store redis, started detached by the
// restart helper's own code, and the restart hook's command line.
type providerFixture struct {
	url, restart string
}

// startProvider serves refprovider with args over r's Redis under a
// prefix of the test's own, on a free address, and waits until it
// answers; it is killed when t ends.
func startProvider(t *testing.T, r redisFixture, args ...string) providerFixture {
	t.Helper()
	dir := t.TempDir()
	addr := freeAddr(t)
	argv := append([]string{refprovider(t), "-store", "redis", "-redis", r.url, "-redis-prefix", "idemcheck-test:" + strings.ReplaceAll(t.Name(), "/", "_") + ":"}, args...)
	argv = append(argv, "-addr", addr) // last: the restart hook reads it there
	b, _ := json.Marshal(argv)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "serve.json"), b, 0o644))
	require.NoError(t, startDetached(dir, argv))
	t.Cleanup(func() {
		if pid, err := readPid(dir); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	exe, err := os.Executable()
	require.NoError(t, err)
	p := providerFixture{url: "http://" + addr, restart: fmt.Sprintf("env IDEMCHECK_TEST_HOOK=restart IDEMCHECK_TEST_DIR=%s %s", dir, exe)}
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			_ = c.Close()
			return p
		}
		if i == 100 {
			log, _ := os.ReadFile(filepath.Join(dir, "serve.log"))
			t.Fatalf("refprovider on %s does not listen: %v\n%s", addr, err, log)
		}
		time.Sleep(100 * time.Millisecond) // a separate process: no channel to wait on
	}
}

// lifecycleProfile is the reference profile publishing lease.
func lifecycleProfile(lease time.Duration) remote.Profile {
	p := remote.ReferenceProfile()
	p.Lifecycle.Lease = remote.Span(lease)
	return p
}

// lifecycleIDs are the lifecycle requirements.
var lifecycleIDs = []string{certify.ReqSlowCreate, certify.ReqRestartHeld, certify.ReqRestartOnce, certify.ReqOutageRefused, certify.ReqOutageReplayed}

// certifyHooks certifies url with prof and hooks, only the requirements
// in only.
func certifyHooks(t *testing.T, url string, prof remote.Profile, hooks remote.Hooks, only ...string) reports.Certification {
	t.Helper()
	return certifyHooksWith(t, url, prof, hooks, certify.Options{Only: only})
}

// certifyHooksWith is certifyHooks with opts.
func certifyHooksWith(t *testing.T, url string, prof remote.Profile, hooks remote.Hooks, opts certify.Options) reports.Certification {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), runBound+30*time.Second)
	defer cancel()
	cert, err := certify.Certify(ctx, remote.Config{BaseURL: url, APIKey: testKey, Profile: prof, Hooks: hooks, Limits: remote.Limits{MaxDuration: runBound}}, opts)
	require.NoError(t, err)
	for _, h := range cert.Hooks {
		t.Logf("hook %s for %s: exit %d %s (%.2fs)", h.Name, h.For, h.ExitCode, h.Error, h.Seconds)
	}
	return cert
}

// reasonOf is requirement id's reason in cert.
func reasonOf(cert reports.Certification, id string) string {
	for _, r := range cert.Requirements {
		if r.ID == id {
			return r.Reason
		}
	}
	return ""
}

// logEvidence logs the exchanges of requirement id, with times.
func logEvidence(t *testing.T, cert reports.Certification, id string) {
	t.Helper()
	for _, r := range cert.Requirements {
		if r.ID != id {
			continue
		}
		for _, e := range r.Evidence {
			t.Logf("%s %s %s?%s sent, arrived %s, done %s: %d %s %s", id, e.SentAt.Format("15:04:05.000"), e.Method, e.Query, e.ArrivedAt.Format("15:04:05.000"), e.DoneAt.Format("15:04:05.000"), e.Status, e.ChargeID, e.Err)
		}
	}
	for _, h := range cert.Hooks {
		t.Logf("hook %s for %s at %s: %.3fs", h.Name, h.For, h.Started.Format("15:04:05.000"), h.Seconds)
	}
}
