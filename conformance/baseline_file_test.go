package conformance_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/idemcheck/idemcheck/conformance"
)

// A baseline that is not a regular file (a folder, a FIFO nobody writes
// to, a device such as /dev/zero) or is larger than 1 MiB is
// refused with an error naming IDEMCHECK_BASELINE, never read: a FIFO used
// to block the run before its first request forever, /dev/zero to grow
// its memory until the system killed it (outside tester).
func TestLoadBaselineRefusesWhatIsNoList(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, bytes.Repeat([]byte("mismatch-rejected\n"), (2<<20)/18), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{dir, fifo, big, os.DevNull} {
		_, err := conformance.LoadBaseline(path)
		if err == nil || !strings.Contains(err.Error(), "IDEMCHECK_BASELINE") {
			t.Errorf("LoadBaseline(%s) = %v, want an error naming IDEMCHECK_BASELINE", path, err)
		}
	}
	ok := filepath.Join(dir, "ok")
	if err := os.WriteFile(ok, []byte("mismatch-rejected\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := conformance.LoadBaseline(ok); err != nil || len(b) != 1 || b[0] != "mismatch-rejected" {
		t.Errorf("LoadBaseline(a CRLF list) = %q, %v", b, err)
	}
}

// A baseline saved with a UTF-8 byte order mark (as some Windows editors
// write it) lists its first entry like any other: the mark is no part of
// it. Regression (outside tester): the first entry matched nothing, its
// FAIL stayed FAIL and the page listed it unused.
func TestParseBaselineDropsAByteOrderMark(t *testing.T) {
	b := conformance.ParseBaseline([]byte("\ufeffmismatch-rejected\r\nreplay-consistent\r\n"))
	v := conformance.ViolationError{Invariant: "mismatch-rejected", Category: "mismatch-rejected: …: x"}
	if !b.Knows(&v) {
		t.Errorf("ParseBaseline(BOM + list) = %q: its first entry does not acknowledge %s", b, v.Invariant)
	}
}
