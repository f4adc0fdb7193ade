package wiremock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// InstallTimeout bounds the `npm ci` that installJar runs; default 5
// minutes.
const InstallTimeout = 5 * time.Minute

// installJar installs the jar the repository pins: in the nearest parent
// of dir whose package.json names the npm package wiremock (this
// repository's root), `npm ci --no-audit --no-fund`, with npm's cache in
// <root>/.cache/npm so nothing is written outside the clone. Concurrent
// test processes take turns through an flock on <root>/.cache/npm-ci.lock;
// the first installs, the others find the jar. It returns the jar's path,
// or an error saying what to install when there is no such package.json
// (an installed binary, not a checkout) or npm fails.
func installJar(dir string) (string, error) {
	root, ok := pinningRoot(dir)
	if !ok {
		return "", fmt.Errorf("wiremock: %s not found under node_modules/wiremock/build in any parent folder, and no package.json pins it; set IDEMCHECK_WIREMOCK_JAR or run from a clone of the repository", JarName)
	}
	jar := filepath.Join(root, "node_modules", "wiremock", "build", JarName)
	cache := filepath.Join(root, ".cache")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", fmt.Errorf("wiremock: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(cache, "npm-ci.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", fmt.Errorf("wiremock: lock file: %w", err)
	}
	defer lock.Close() // closing the file releases the flock
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("wiremock: lock file: %w", err)
	}
	if _, err := os.Stat(jar); err == nil {
		return jar, nil // another process installed it while this one waited
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("wiremock: %s is not installed and npm is not on PATH to install it (install Node.js and run `npm ci` at %s, or set IDEMCHECK_WIREMOCK_JAR): %w", JarName, root, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), InstallTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--cache", filepath.Join(cache, "npm"))
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("wiremock: `npm ci` at %s failed: %w\n%s", root, err, out)
	}
	if _, err := os.Stat(jar); err != nil {
		return "", fmt.Errorf("wiremock: `npm ci` at %s did not install %s: %w", root, JarName, err)
	}
	return jar, nil
}

// pinningRoot is the nearest folder from dir up whose package.json names
// the npm package wiremock.
func pinningRoot(dir string) (string, bool) {
	for {
		b, err := os.ReadFile(filepath.Join(dir, "package.json"))
		if err == nil && strings.Contains(string(b), `"wiremock"`) {
			return dir, true
		}
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", false
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// waitInstall waits for an installJar of another process at root to end
// (a shared flock on its lock file), so a jar still being written is not
// started.
func waitInstall(root string) {
	lock, err := os.Open(filepath.Join(root, ".cache", "npm-ci.lock"))
	if err != nil {
		return // no install ever ran here
	}
	defer lock.Close()
	_ = syscall.Flock(int(lock.Fd()), syscall.LOCK_SH)
}
