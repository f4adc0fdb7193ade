package main_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
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

// TestCertifyRefusesABadProfileFile: a profile that is a FIFO, a device,
// names a field twice, carries data after its object, is null, or holds a
// replay_header that is no header name is refused with exit 2 and one
// stderr line naming the profile's path and the field, before any request.
// Regression (issue 22, item 6): the FIFO hung the run, /dev/zero crashed
// it, the others were taken (and the CRLF header split a stderr line).
func TestCertifyRefusesABadProfileFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct{ path, field string }{
		{fifo, "not a regular file"},
		{"/dev/zero", "not a regular file"},
		{write("dup.json", `{"environment":"production","environment":"sandbox"}`), "environment appears twice"},
		{write("trailing.json", `{"name":"x"}{"name":"y"}`), "after the JSON object"},
		{write("null.json", `null`), "null"},
		{write("header.json", `{"replay_header":"X-Replayed\r\nInjected: 1"}`), "replay_header"},
		{write("status.json", `{"statuses":{"mismatch":200}}`), "statuses.mismatch"},
		{write("accounts.json", `{"accounts":-1}`), "accounts"},
	} {
		t.Run(filepath.Base(c.path), func(t *testing.T) {
			var requests atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { requests.Add(1) }))
			t.Cleanup(srv.Close)
			code, stdout, stderr := idemcheck(t, nil, "certify", "--profile", c.path, "--report-dir", t.TempDir(), srv.URL)
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			if code != 2 || stdout != "" || len(lines) != 1 || !strings.Contains(stderr, c.path) || !strings.Contains(stderr, c.field) {
				t.Errorf("exit %d, stdout %q, stderr %q: want exit 2 and one line naming %s and %q", code, stdout, stderr, c.path, c.field)
			}
			if n := requests.Load(); n != 0 {
				t.Errorf("the provider got %d requests, want 0", n)
			}
		})
	}
}
