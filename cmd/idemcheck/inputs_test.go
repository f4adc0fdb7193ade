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

// counting is a loopback server that counts the requests it receives and
// answers each 404.
func counting(t *testing.T) (url string, requests *atomic.Int64) {
	t.Helper()
	requests = new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, requests
}

// refusedInOneLine fails t unless the run exited 2 with one stderr line
// holding every one of want, and nothing on stdout.
func refusedInOneLine(t *testing.T, code int, stdout, stderr string, want ...string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	ok := code == 2 && stdout == "" && len(lines) == 1
	for _, w := range want {
		ok = ok && strings.Contains(stderr, w)
	}
	if !ok {
		t.Errorf("exit %d, stdout %q, stderr %q: want exit 2 and one line naming %q", code, stdout, stderr, want)
	}
}

// TestCertifyRefusesBudgetsOfZeroOrBelow: a budget flag given as zero or
// below is refused, naming the flag, with nothing sent. Regression (issue
// 22, item 3): --budget-requests -5 sent 808 requests and
// --budget-duration 0s meant 30 minutes (the defaults).
func TestCertifyRefusesBudgetsOfZeroOrBelow(t *testing.T) {
	for _, c := range [][2]string{{"--budget-requests", "-5"}, {"--budget-requests", "0"}, {"--budget-charges", "0"},
		{"--budget-charges", "-1"}, {"--budget-duration", "0s"}, {"--budget-duration", "-3s"}, {"--checks", "0"},
		{"--concurrency", "0"}, {"--concurrency", "-2"}} {
		t.Run(c[0]+"="+c[1], func(t *testing.T) {
			url, requests := counting(t)
			code, stdout, stderr := idemcheck(t, nil, "certify", c[0], c[1], "--report-dir", t.TempDir(), url)
			refusedInOneLine(t, code, stdout, stderr, c[0])
			if n := requests.Load(); n != 0 {
				t.Errorf("the provider got %d requests, want 0", n)
			}
		})
	}
}

// TestCertifyRefusesAReportFolderItCannotWrite: --report-dir naming a
// file (or a folder below one), and IDEMCHECK_REPORT_DIR naming one, are
// refused with exit 2 and one line naming what the user gave, before any
// request. Regression (issue 22, item 4): 49 requests (37 creates) were
// sent, then the run exited 2 with "nothing was certified".
func TestCertifyRefusesAReportFolderItCannotWrite(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		env   []string
		args  []string
		named string
	}{
		"flag, a file":       {nil, []string{"--report-dir", file}, "--report-dir " + file},
		"flag, under a file": {nil, []string{"--report-dir", filepath.Join(file, "sub")}, "--report-dir " + filepath.Join(file, "sub")},
		"variable, a file":   {[]string{"IDEMCHECK_REPORT_DIR=" + file}, nil, "IDEMCHECK_REPORT_DIR=" + file},
	} {
		t.Run(name, func(t *testing.T) {
			url, requests := counting(t)
			code, stdout, stderr := idemcheck(t, c.env, append(append([]string{"certify"}, c.args...), url)...)
			refusedInOneLine(t, code, stdout, stderr, c.named)
			if n := requests.Load(); n != 0 {
				t.Errorf("the provider got %d requests, want 0", n)
			}
		})
	}
}

// TestRapidVariablesAreRefusedUpFront: a RAPID_* variable rapid cannot
// parse is refused with exit 2 and one line naming it, even with --seed,
// instead of rapid's init panicking with a goroutine trace. Regression
// (issue 22, item 9).
func TestRapidVariablesAreRefusedUpFront(t *testing.T) {
	url, requests := counting(t)
	for _, c := range []struct {
		env  string
		args []string
	}{
		{"RAPID_SEED=abc", []string{"certify", "--seed", "5", "--report-dir", t.TempDir(), url}},
		{"RAPID_CHECKS=abc", []string{"certify", "--checks", "3", "--report-dir", t.TempDir(), url}},
		{"RAPID_SEED=abc", []string{"run", "--seed", "5", "--report-dir", t.TempDir()}},
		{"RAPID_SHRINKTIME=soon", []string{"run", "--report-dir", t.TempDir()}},
	} {
		code, stdout, stderr := idemcheck(t, []string{c.env}, c.args...)
		name, _, _ := strings.Cut(c.env, "=")
		refusedInOneLine(t, code, stdout, stderr, name)
		if strings.Contains(stderr, "goroutine") || strings.Contains(stderr, "panic") {
			t.Errorf("%s: stderr %q holds a panic", c.env, stderr)
		}
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("the provider got %d requests, want 0", n)
	}
}

// TestCertifyNamesTheFlagsTheUserGave: a baseline that cannot be read is
// one line naming --baseline (not a 4-line go test block naming
// IDEMCHECK_BASELINE); a key from --api-key-env OTHER is named OTHER; a
// second key equal to the first is refused as the same key; replay of a
// provider that is not one exits 2, not 1 ("the failure came back").
// Nothing is sent. Regression (issue 22, item 10).
func TestCertifyNamesTheFlagsTheUserGave(t *testing.T) {
	url, requests := counting(t)
	missing := filepath.Join(t.TempDir(), "no-baseline")
	code, stdout, stderr := idemcheck(t, nil, "certify", "--baseline", missing, "--report-dir", t.TempDir(), url)
	refusedInOneLine(t, code, stdout, stderr, "--baseline "+missing)
	if strings.Contains(stderr, "IDEMCHECK_BASELINE") {
		t.Errorf("stderr %q names IDEMCHECK_BASELINE; the user gave --baseline", stderr)
	}
	code, stdout, stderr = idemcheck(t, []string{"OTHER=sk_live_0123"}, "certify", "--api-key-env", "OTHER", "--report-dir", t.TempDir(), url)
	refusedInOneLine(t, code, stdout, stderr, "OTHER has a live marker")
	if strings.Contains(stderr, "IDEMCHECK_API_KEY") {
		t.Errorf("stderr %q names IDEMCHECK_API_KEY; the user gave --api-key-env OTHER", stderr)
	}
	code, stdout, stderr = idemcheck(t, []string{"IDEMCHECK_API_KEY=sk_test_a", "IDEMCHECK_API_KEY_2=sk_test_a"}, "certify", "--report-dir", t.TempDir(), url)
	refusedInOneLine(t, code, stdout, stderr, "same key")
	if strings.Contains(stderr, "character") {
		t.Errorf("stderr %q blames a character; the key is repeated", stderr)
	}
	ff := filepath.Join(t.TempDir(), "x.fail")
	if err := os.WriteFile(ff, []byte("v0.4.8#1\n0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = idemcheck(t, nil, "replay", "-provider", "ftp://x", "-report-dir", t.TempDir(), ff)
	refusedInOneLine(t, code, stdout, stderr, "ftp://x")
	if n := requests.Load(); n != 0 {
		t.Errorf("the provider got %d requests, want 0", n)
	}
}

// TestCertifyRefusesConcurrencyOutOfRange: --concurrency above 64 and an
// IDEMCHECK_CONCURRENCY that is not 1 to 64 are refused in one line
// naming what the user gave, before any request (issue 24, item 3).
func TestCertifyRefusesConcurrencyOutOfRange(t *testing.T) {
	for name, c := range map[string]struct {
		env   []string
		args  []string
		named string
	}{
		"flag":     {nil, []string{"--concurrency", "65"}, "Concurrency 65"},
		"variable": {[]string{"IDEMCHECK_CONCURRENCY=lots"}, nil, `IDEMCHECK_CONCURRENCY="lots"`},
	} {
		t.Run(name, func(t *testing.T) {
			url, requests := counting(t)
			code, stdout, stderr := idemcheck(t, c.env, append(append([]string{"certify"}, c.args...), "--report-dir", t.TempDir(), url)...)
			refusedInOneLine(t, code, stdout, stderr, c.named)
			if n := requests.Load(); n != 0 {
				t.Errorf("the provider got %d requests, want 0", n)
			}
		})
	}
}
