package service

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

// Launcher starts one fresh instance of a checkout service (no orders, no
// attempts) whose payment provider is providerURL, and returns its base
// URL and how to stop it. The harness calls it once per drawn sequence.
type Launcher func(ctx context.Context, providerURL string) (baseURL string, stop func(), err error)

// StartTimeout bounds how long Command waits for a service's
// "listening on" line.
const StartTimeout = 10 * time.Second

// ProviderURLVar is the environment variable Command sets to the
// provider's base URL.
const ProviderURLVar = "IDEMCHECK_PROVIDER_URL"

var listening = regexp.MustCompile(`listening on (http://(127\.0\.0\.1|\[::1\]|localhost):[0-9]+)`)

// Command is the Launcher of a service run as the program name with args
// (docs/client-api.md, "Starting the service"): the provider's base URL in
// IDEMCHECK_PROVIDER_URL, and the service prints "listening on
// http://127.0.0.1:<port>" on stdout once it serves (listen on
// 127.0.0.1:0: no fixed ports). It waits StartTimeout at most, reads at
// most 64 KiB of stdout looking for that line, and stops the process by
// killing it (a crash, as the contract allows at any time).
func Command(name string, args ...string) Launcher {
	return func(ctx context.Context, providerURL string) (string, func(), error) {
		cmd := exec.Command(name, args...)
		cmd.Env = append(os.Environ(), ProviderURLVar+"="+providerURL)
		out, err := cmd.StdoutPipe()
		if err != nil {
			return "", nil, err
		}
		var stderr tail
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			return "", nil, fmt.Errorf("service: start %s: %w", name, err)
		}
		stop := func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		found := make(chan string, 1)
		go func() {
			sc := bufio.NewScanner(io.LimitReader(out, 64<<10))
			for sc.Scan() {
				if m := listening.FindStringSubmatch(sc.Text()); m != nil {
					found <- m[1]
					break
				}
			}
			close(found)
			_, _ = io.Copy(io.Discard, out) // keep the pipe drained
		}()
		timer := time.NewTimer(StartTimeout)
		defer timer.Stop()
		select {
		case u, ok := <-found:
			if ok {
				return u, stop, nil
			}
			stop()
			return "", nil, fmt.Errorf("service: %s ended without printing \"listening on http://127.0.0.1:<port>\"%s", name, stderr.says())
		case <-timer.C:
			stop()
			return "", nil, fmt.Errorf("service: %s did not print \"listening on http://127.0.0.1:<port>\" within %v%s", name, StartTimeout, stderr.says())
		case <-ctx.Done():
			stop()
			return "", nil, errors.New("service: start cancelled")
		}
	}
}

// tail keeps the last 2 KiB written to it (a process's stderr), for the
// error that says why it did not start.
type tail struct{ b []byte }

func (t *tail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 2048 {
		t.b = t.b[len(t.b)-2048:]
	}
	return len(p), nil
}

func (t *tail) says() string {
	if s := strings.TrimSpace(string(t.b)); s != "" {
		return "; its stderr ends: " + s
	}
	return ""
}
