package main_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestCertifyRefusesAZeroRetentionWindow: a profile whose
// retention_window is "0s" is refused with exit 2, naming the field,
// before any request. Regression (issue 11, breaker): it silently became
// the 24 h default.
func TestCertifyRefusesAZeroRetentionWindow(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { requests.Add(1) }))
	t.Cleanup(srv.Close)
	prof := filepath.Join(t.TempDir(), "zero.json")
	if err := os.WriteFile(prof, []byte(`{"name":"zero","retention_window":"0s"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := idemcheck(t, nil, "certify", srv.URL, "--profile", prof, "--report-dir", t.TempDir())
	if code != 2 || stdout != "" || !strings.Contains(stderr, "retention_window") || !strings.Contains(stderr, "zero duration is refused") {
		t.Errorf("exit %d, stdout %q, stderr %q: want exit 2 and a refusal naming retention_window", code, stdout, stderr)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("the provider got %d requests, want 0", n)
	}
}

// TestCertifyRefusesASubSecondRetentionWindow: a profile whose
// retention_window is below 1 s ("1ns", "999ms") is refused like "0s":
// exit 2, the message naming the field and the minimum, no request sent.
// Regression (outside tester): "1ns" was accepted and the run started.
func TestCertifyRefusesASubSecondRetentionWindow(t *testing.T) {
	for _, window := range []string{"1ns", "999ms"} {
		t.Run(window, func(t *testing.T) {
			var requests atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { requests.Add(1) }))
			t.Cleanup(srv.Close)
			prof := filepath.Join(t.TempDir(), "short.json")
			if err := os.WriteFile(prof, []byte(`{"name":"short","retention_window":"`+window+`"}`), 0o644); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := idemcheck(t, nil, "certify", srv.URL, "--profile", prof, "--report-dir", t.TempDir())
			if code != 2 || stdout != "" || !strings.Contains(stderr, "retention_window") || !strings.Contains(stderr, "minimum of 1s") {
				t.Errorf("exit %d, stdout %q, stderr %q: want exit 2 and a refusal naming retention_window and its 1s minimum", code, stdout, stderr)
			}
			if n := requests.Load(); n != 0 {
				t.Errorf("the provider got %d requests, want 0", n)
			}
		})
	}
}
