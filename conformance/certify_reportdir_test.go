package conformance_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestCertifyProviderSendsNothingWithoutAReportFolder: CertifyProvider
// with a report folder that names a file fails before its first request:
// the loopback provider counts none. TestCertify runs in a child test
// process (it must fail), certifying the counting server. Regression
// (issue 22, item 4): 49 requests went out before the page could not be
// written.
func TestCertifyProviderSendsNothingWithoutAReportFolder(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCertify$", "-test.count=1")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "IDEMCHECK_PROVIDER="+srv.URL, "IDEMCHECK_REPORT_DIR="+file, "IDEMCHECK_PROFILE=", "IDEMCHECK_API_KEY=",
		"IDEMCHECK_API_KEY_2=", "IDEMCHECK_BASELINE=", "GITHUB_STEP_SUMMARY=", "IDEMCHECK_MAX_DURATION=1m")
	out, err := cmd.CombinedOutput()
	if _, failed := err.(*exec.ExitError); !failed {
		t.Fatalf("the child certification did not fail (%v):\n%s", err, out)
	}
	if !strings.Contains(string(out), "report folder "+file) {
		t.Errorf("the failure does not name the report folder:\n%s", out)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("the provider got %d requests, want 0:\n%s", n, out)
	}
}
