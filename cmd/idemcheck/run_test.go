package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunAndReplay: idemcheck run passes against the embedded provider
// (exit 0, the index's path on stdout) and fails with a client mutant
// (exit 1), leaving rapid's fail file; idemcheck replay of that file fails
// again with the mutant and passes without it.
func TestRunAndReplay(t *testing.T) {
	dir := t.TempDir()
	reports := filepath.Join(dir, "reports")
	code, stdout, stderr := idemcheckIn(t, dir, nil, "run", "--checks", "5", "--report-dir", reports)
	if code != 0 || strings.TrimSpace(stdout) != filepath.Join(reports, "index.md") {
		t.Fatalf("idemcheck run: exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
	}
	code, _, stderr = idemcheckIn(t, dir, nil, "run", "--mutant", "fresh-key-per-request", "--checks", "20", "--report-dir", reports)
	if code != 1 || !strings.Contains(stderr, "one-key-per-intent") {
		t.Fatalf("idemcheck run --mutant fresh-key-per-request: exit %d, want 1 naming one-key-per-intent; stderr:\n%s", code, stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "testdata", "rapid", "*", "*.fail"))
	if len(files) != 1 {
		t.Fatalf("fail files %q, want one", files)
	}
	rel, _ := filepath.Rel(dir, files[0])
	if want := "replay: idemcheck replay " + rel + " -mutant fresh-key-per-request\n"; !strings.Contains(stderr, want) {
		t.Errorf("the report's replay line is not %q:\n%s", want, stderr)
	}
	if code, _, stderr := idemcheckIn(t, dir, nil, "replay", "--mutant", "fresh-key-per-request", "--report-dir", reports, files[0]); code != 1 {
		t.Errorf("replay with the mutant: exit %d, want 1; stderr:\n%s", code, stderr)
	}
	if err := os.Rename(filepath.Join(dir, "testdata"), filepath.Join(dir, "kept")); err != nil {
		t.Fatal(err) // else rapid replays it first under the test's name
	}
	kept := filepath.Join(dir, "kept", strings.TrimPrefix(files[0], filepath.Join(dir, "testdata")))
	if code, _, stderr := idemcheckIn(t, dir, nil, "replay", "--report-dir", reports, kept); code != 0 {
		t.Errorf("replay without the mutant: exit %d, want 0; stderr:\n%s", code, stderr)
	}
	if code, _, _ := idemcheckIn(t, dir, []string{"IDEMCHECK_PROVIDER=http://127.0.0.1:1"}, "run"); code != 2 {
		t.Errorf("idemcheck run with a URL: exit %d, want 2", code)
	}
}
