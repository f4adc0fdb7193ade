package certify_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// stripeMockModule is the stripe-mock the tests install and run.
const stripeMockModule = "github.com/stripe/stripe-mock@v0.203.0"

// stripeMock installs stripe-mock (go install into .cache/ at the root of
// the clone, git-ignored, so nothing is written outside it but Go's own
// caches) unless it is already there, and returns its path. It fails
// loudly, never skips: CI runs on a fresh clone.
func stripeMock(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	require.FileExists(t, filepath.Join(root, "go.mod"), "certify's tests run in certify/, one below the root")
	bin := filepath.Join(root, ".cache", "stripe-mock-v0.203.0")
	if _, err := os.Stat(filepath.Join(bin, "stripe-mock")); err == nil {
		return filepath.Join(bin, "stripe-mock") // the folder is per version: no need to ask the module proxy again
	}
	goCmd, err := exec.LookPath("go")
	require.NoError(t, err, "the go command is needed to install stripe-mock")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goCmd, "install", stripeMockModule)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "GOBIN="+bin, "GOFLAGS=-mod=mod")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go install %s failed:\n%s", stripeMockModule, out)
	return filepath.Join(bin, "stripe-mock")
}

// startStripeMock runs stripe-mock on loopback free ports (HTTP and the
// HTTPS listener it always opens) and returns its HTTP base URL.
func startStripeMock(t *testing.T, path string) string {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	cmd := exec.Command(path, "-http-addr", "127.0.0.1:0", "-https-addr", "127.0.0.1:0")
	cmd.Stdout, cmd.Stderr = w, w
	require.NoError(t, cmd.Start())
	_ = w.Close()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = r.Close()
	})
	const prefix = "Listening for HTTP at address: "
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, prefix) {
				found <- strings.TrimPrefix(line, prefix)
			}
		}
		close(found)
	}()
	select {
	case addr, ok := <-found:
		require.True(t, ok, "stripe-mock exited without listening")
		return "http://" + addr
	case <-time.After(60 * time.Second):
		require.FailNow(t, "stripe-mock printed no listening line within 60s")
	}
	return ""
}

// stripe-mock is stateless: it never replays and never refuses a reused
// key. Certified with the stripe dialect and its shipped profile, the run
// completes within its budget and says so honestly — FAIL on replay — with
// no crash and no hang.
func TestCertify_StripeMockReportsHonestly(t *testing.T) {
	url := startStripeMock(t, stripeMock(t))
	prof, err := remote.LoadProfile("../profiles/stripe-mock.json")
	require.NoError(t, err)
	lim := remote.Limits{MaxRequests: 60, MaxCharges: 40, MaxDuration: runBound}
	ctx, cancel := context.WithTimeout(t.Context(), runBound+30*time.Second)
	defer cancel()
	cert, err := certify.Certify(ctx, remote.Config{BaseURL: url, Dialect: remote.DialectStripe, APIKey: testKey, Profile: prof, Limits: lim}, certify.Options{})
	require.NoError(t, err)
	v := verdicts(t, cert)
	assert.Equal(t, reports.Fail, v[certify.ReqReplay], "a stateless mock cannot replay")
	assert.Equal(t, reports.Fail, v[certify.ReqMismatch], "a stateless mock refuses no reused key")
	assert.Equal(t, reports.NotOffered, v[certify.ReqMissingKey], "the profile makes keys optional: the keyless retry's charges are shown")
	assert.Equal(t, reports.NotJudged, v[certify.ReqQuotedKey], "the stripe dialect sends bare keys")
	assert.Len(t, v, len(certify.Requirements()))
	assert.Less(t, cert.Finished.Sub(cert.Started), lim.MaxDuration)
	assert.Equal(t, "stripe", cert.Dialect)
}
