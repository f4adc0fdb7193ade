// Package wiremock runs a real WireMock server (the standalone jar, on
// 127.0.0.1) and programs it, through go-wiremock, to imitate a payment
// provider that honours Idempotency-Key (docs/provider-api.md): per key a
// WireMock scenario whose stubs answer each request in order of arrival,
// with WireMock's own faults and delays. The request journal is the record
// of what crossed the network.
//
// Index:
//   - server.go   — Server: start the jar, wait for health, reset, stop; Shared for TestMain.
//   - provider.go — Provider: the stateful imitation, an http.RoundTripper with native faults.
//   - refunds.go  — the refunds endpoint: its own scenario per key, Refunds, the planted refund bugs.
//   - stubs.go    — the stubs one answer becomes.
//   - journal.go  — the request journal and scenario states, read back.
package wiremock

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	gowiremock "github.com/wiremock/go-wiremock"
)

// JarName is the WireMock standalone jar this package runs, as the npm
// package wiremock@3.13.2 ships it (package.json at the repository root
// pins it; `npm ci` installs it under node_modules/wiremock/build/).
const JarName = "wiremock-standalone-3.13.2.jar"

// StartTimeout bounds how long Start waits for the server to answer
// GET /__admin/health; default 2 minutes (a JVM on a loaded 2-core machine
// has been seen to take 40 s).
const StartTimeout = 2 * time.Minute

// Server is one WireMock server. Its methods are safe for concurrent use.
type Server struct {
	// URL is its base URL, http://127.0.0.1:PORT.
	URL string
	// Admin is the go-wiremock client for its admin API.
	Admin *gowiremock.Client

	cmd  *exec.Cmd // nil for a server started by someone else
	done chan struct{}
	log  *tailBuffer
}

// Attach returns a Server for a WireMock already running at url (for
// IDEMCHECK_WIREMOCK_URL); Stop leaves it running.
func Attach(url string) *Server {
	url = strings.TrimRight(url, "/")
	return &Server{URL: url, Admin: gowiremock.NewClient(url)}
}

// FindJar looks for JarName: $IDEMCHECK_WIREMOCK_JAR if set, else
// node_modules/wiremock/build/<JarName> in the working directory or any
// parent of it (go test runs in the package directory). When there is
// none it installs it: `npm ci` in the repository root, the nearest
// parent whose package.json pins wiremock (installJar), so a WireMock test
// needs no setup step but Node.js.
func FindJar() (string, error) {
	if p := os.Getenv("IDEMCHECK_WIREMOCK_JAR"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("wiremock: IDEMCHECK_WIREMOCK_JAR: %w", err)
		}
		return p, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, "node_modules", "wiremock", "build", JarName)
		if _, err := os.Stat(p); err == nil {
			waitInstall(dir)
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			wd, _ := os.Getwd()
			return installJar(wd)
		}
		dir = parent
	}
}

var portLine = regexp.MustCompile(`(?m)^port:\s+(\d+)\s*$`)

// Start runs `java -jar <jar> --port 0 --bind-address 127.0.0.1`, reads
// the port WireMock picked from its start-up banner, and waits until
// GET /__admin/health answers 200, for at most StartTimeout. The java
// process dies with the test process (SIGKILL on parent death) even if
// Stop is never called.
func Start(ctx context.Context, jar string) (*Server, error) {
	ctx, cancel := context.WithTimeout(ctx, StartTimeout)
	defer cancel()
	cmd := exec.Command("java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xss512k",
		"-jar", jar, "--port", "0", "--bind-address", "127.0.0.1",
		"--container-threads", "64", "--async-response-enabled", "true", "--async-response-threads", "32")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s := &Server{cmd: cmd, done: make(chan struct{}), log: &tailBuffer{}}
	cmd.Stderr = s.log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("wiremock: start java: %w", err)
	}
	port := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			s.log.Write([]byte(line + "\n"))
			if m := portLine.FindStringSubmatch(line); m != nil {
				select {
				case port <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	go func() { _ = cmd.Wait(); close(s.done) }()
	select {
	case p := <-port:
		s.URL = "http://127.0.0.1:" + p
		s.Admin = gowiremock.NewClient(s.URL)
	case <-s.done:
		return nil, fmt.Errorf("wiremock: java exited before listening:\n%s", s.log.String())
	case <-ctx.Done():
		s.Stop()
		return nil, fmt.Errorf("wiremock: no port announced within %s:\n%s", StartTimeout, s.log.String())
	}
	if err := s.waitHealthy(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	if err := s.warmUp(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// warmUpRequests is how many requests warmUp sends: enough for the JVM to
// compile WireMock's request path, so that the first requests of a test do
// not take longer than a scaled-down attempt timeout (a cold server has
// been seen to take over 200 ms for its first answer).
const warmUpRequests = 300

// warmUp stubs a path, requests it warmUpRequests times on fresh
// connections, and resets the server.
func (s *Server) warmUp(ctx context.Context) error {
	rule := gowiremock.Post(gowiremock.URLPathEqualTo("/__idemcheck/warm-up")).
		WithHeader("Idempotency-Key", gowiremock.Matching(`^"?warm"?$`)).
		WillReturnResponse(gowiremock.NewResponse().WithStatus(201).WithBody(`{"id":"warm"}`))
	if err := s.Admin.StubFor(rule); err != nil {
		return fmt.Errorf("wiremock: warm-up stub: %w", err)
	}
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}
	for i := 0; i < warmUpRequests; i++ {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/__idemcheck/warm-up", strings.NewReader(`{"n":1}`))
		req.Header.Set("Idempotency-Key", `"warm"`)
		resp, err := hc.Do(req)
		if err != nil {
			return fmt.Errorf("wiremock: warm-up: %w", err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return s.Reset()
}

// waitHealthy polls GET /__admin/health every 50 ms until it answers 200
// or ctx ends.
func (s *Server) waitHealthy(ctx context.Context) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/__admin/health", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wiremock: %s/__admin/health did not answer 200 in time (%v):\n%s", s.URL, err, s.log.String())
		case <-s.done:
			return fmt.Errorf("wiremock: java exited:\n%s", s.log.String())
		case <-tick.C:
		}
	}
}

// Reset removes every stub, the request journal and every scenario
// (POST /__admin/reset).
func (s *Server) Reset() error { return s.Admin.Reset() }

// Stop kills the server it started and waits for it to exit (at most 10
// s); for an attached server it does nothing.
func (s *Server) Stop() {
	if s == nil || s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
	}
}

// Shared is one WireMock server for a whole test package, started on first
// use and stopped by Stop (call it from TestMain after m.Run). With
// IDEMCHECK_WIREMOCK_URL set it attaches to that server instead of
// starting one, and holds it alone: every run resets the server, so test
// processes that share one (go test ./... runs packages in parallel) take
// turns, through a lock file in the temporary directory, waiting at most
// LockWait. A child process of the holder sets IDEMCHECK_WIREMOCK_LOCKED=1
// to use the server under its parent's turn. It is safe for concurrent use.
type Shared struct {
	once sync.Once
	srv  *Server
	err  error
	lock *os.File // held while this process uses an attached server
}

// LockWait bounds how long Shared.Get waits for its turn at an attached
// server; default 15 minutes.
var LockWait = 15 * time.Minute

// Get returns the shared server, starting it the first time.
func (sh *Shared) Get() (*Server, error) {
	sh.once.Do(func() {
		if url := os.Getenv("IDEMCHECK_WIREMOCK_URL"); url != "" {
			if os.Getenv("IDEMCHECK_WIREMOCK_LOCKED") != "1" {
				if sh.lock, sh.err = lockServer(url); sh.err != nil {
					return
				}
			}
			sh.srv = Attach(url)
			return
		}
		jar, err := FindJar()
		if err != nil {
			sh.err = err
			return
		}
		sh.srv, sh.err = Start(context.Background(), jar)
	})
	return sh.srv, sh.err
}

// Stop stops the shared server if this process started it, and gives up
// its turn at an attached one.
func (sh *Shared) Stop() {
	if sh.srv != nil {
		sh.srv.Stop()
	}
	if sh.lock != nil {
		_ = sh.lock.Close() // closing the file releases the flock
	}
}

// lockServer takes this process's turn at the server at url: an exclusive
// flock on a file named after it, polled every 100 ms for at most
// LockWait. The lock dies with the process.
func lockServer(url string) (*os.File, error) {
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, url)
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "idemcheck-wiremock-"+name+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("wiremock: lock file: %w", err)
	}
	deadline := time.Now().Add(LockWait)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("wiremock: another test process holds %s (waited %s): %w", url, LockWait, err)
		}
		<-tick.C
	}
}

// tailBuffer keeps the last 8 KiB written to it, for error messages.
type tailBuffer struct {
	mu sync.Mutex // guards b
	b  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if n := len(t.b) - 8<<10; n > 0 {
		t.b = t.b[n:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
