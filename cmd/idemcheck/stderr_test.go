package main_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/certify"
)

// requirementsCounted is how a verdict line counts the requirements,
// "requirements (N): ", N their number (certify.Requirements).
var requirementsCounted = fmt.Sprintf("requirements (%d): ", len(certify.Requirements()))

// logLineRE finds the line that names a failing run's rapid.log.
var logLineRE = regexp.MustCompile(`(?m)^idemcheck: rapid's log [^\n]*: (\S+/rapid\.log)$`)

// maxFailureLines bounds stderr of a failing certification without -v:
// the seed, a line a requirement, a count every 10 sequences, the done
// line, three lines a deviation, the log's line and the verdict.
const maxFailureLines = 60

// TestCertifyFailureKeepsStderrShort: a certification that FAILs prints
// on stderr its progress and a short summary of each deviation (the
// invariant and shopper steps, the report, the replay line), and names
// the rapid.log in the certification's run folder that holds rapid's
// draws; with -v the draws are on stderr and no log is kept. Regression
// (outside tester): without -v stderr held every draw of the failing and
// shrunk sequences (128 lines in this run, more with longer counterexamples).
func TestCertifyFailureKeepsStderrShort(t *testing.T) {
	url := serve(t, "--mutant", "replay-new-charge")
	dir := t.TempDir()
	args := []string{"certify", url, "--profile", absProfile(t), "--checks", "20", "--seed", "1", "--report-dir", filepath.Join(dir, "reports")}
	code, stdout, stderr := idemcheckIn(t, dir, nil, args...)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (FAIL); stderr:\n%s", code, stderr)
	}
	if n := strings.Count(stderr, "\n"); n >= maxFailureLines {
		t.Errorf("stderr holds %d lines, want fewer than %d:\n%s", n, maxFailureLines, stderr)
	}
	if strings.Contains(stderr, "[rapid]") {
		t.Errorf("stderr holds rapid's draws without -v:\n%s", stderr)
	}
	for _, want := range []string{"] FAIL replay-returns-first-response: ", "idemcheck: done, ", "idemcheck: FAIL · causes (1): 1 charges twice; " + requirementsCounted,
		"idemcheck: shrinking replay-consistent: now "} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	m := deviationRE.FindStringSubmatch(stderr)
	if m == nil || m[1] != "replay-consistent" || !strings.HasPrefix(m[4], "idemcheck replay ") {
		t.Errorf("stderr has no deviation summary of replay-consistent with its report and replay line (%q):\n%s", m, stderr)
	} else if _, err := os.Stat(inDir(dir, m[3])); err != nil {
		t.Errorf("the summary's report: %v", err)
	}
	l := logLineRE.FindStringSubmatch(stderr)
	if l == nil {
		t.Fatalf("stderr names no rapid.log:\n%s", stderr)
	}
	if page := strings.TrimSpace(stdout); filepath.Dir(inDir(dir, l[1])) != filepath.Dir(page) {
		t.Errorf("rapid.log %s is not in the certification's run folder %s", l[1], filepath.Dir(page))
	}
	log, err := os.ReadFile(inDir(dir, l[1]))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"[rapid] draw action:", "replay-consistent", "--- FAIL: idemcheck"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("rapid.log lacks %q", want)
		}
	}

	code, stdout, stderr = idemcheckIn(t, dir, nil, append(args, "-v")...)
	if code != 1 || !strings.Contains(stderr, "[rapid] draw action:") {
		t.Errorf("-v: exit %d, want 1 with rapid's draws on stderr:\n%s", code, stderr)
	}
	if logLineRE.MatchString(stderr) {
		t.Errorf("-v names a rapid.log:\n%s", stderr)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(strings.TrimSpace(stdout)), "rapid.log")); err == nil {
		t.Error("-v kept a rapid.log")
	}
}

// TestRunFailureKeepsStderrShort: idemcheck run with a client mutant
// prints its shrink progress as certify does (a few lines: a new shortest
// sequence, then doubling intervals; before, run shrank in silence), the
// deviation's summary (invariant, steps, report, replay line) and the
// rapid.log of its run folder, not rapid's draws. Regression (outside
// tester): every draw went to stderr.
func TestRunFailureKeepsStderrShort(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := idemcheckIn(t, dir, nil, "run", "--mutant", "fresh-key-per-request", "--checks", "20", "--seed", "1", "--report-dir", "reports")
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", code, stderr)
	}
	shrinking := regexp.MustCompile(`(?m)^idemcheck: shrinking one-key-per-intent: now [0-9]+ shopper steps?, [0-9]+ shrink checks\n`)
	lines := shrinking.FindAllString(stderr, -1)
	if len(lines) == 0 || len(lines) > 12 {
		t.Errorf("stderr holds %d shrink progress lines (want 1 to 12, in certify's style; issue 23, item 2):\n%s", len(lines), stderr)
	}
	if n := strings.Count(shrinking.ReplaceAllString(stderr, ""), "\n"); n >= 10 || strings.Contains(stderr, "[rapid]") {
		t.Errorf("stderr holds %d lines besides the shrink progress (want fewer than 10, none of rapid's):\n%s", n, stderr)
	}
	m := deviationRE.FindStringSubmatch(stderr)
	if m == nil || m[1] != "one-key-per-intent" {
		t.Fatalf("stderr has no deviation summary of one-key-per-intent (%q):\n%s", m, stderr)
	}
	l := logLineRE.FindStringSubmatch(stderr)
	if l == nil || filepath.Dir(l[1]) != filepath.Dir(m[3]) {
		t.Fatalf("stderr names no rapid.log beside the report %s:\n%s", m[3], stderr)
	}
	if log, err := os.ReadFile(inDir(dir, l[1])); err != nil || !strings.Contains(string(log), "[rapid] draw") {
		t.Errorf("rapid.log (%v) holds no draw", err)
	}
}

// TestCertifyUnreachableSaysSoOnce: against a closed loopback port
// certify exits 3 (INCONCLUSIVE: nothing could be decided) and says the
// provider is unreachable once, in a few stderr lines. Regression
// (outside tester): the message was printed 17 times; then (issue 22,
// item 10) 37 lines for one cause, a progress line and a closing line per
// requirement.
func TestCertifyUnreachableSaysSoOnce(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := idemcheck(t, nil, "certify", url, "--report-dir", t.TempDir())
	if code != 3 {
		t.Errorf("exit %d, want 3 (INCONCLUSIVE); stderr:\n%s", code, stderr)
	}
	if n := strings.Count(stderr, "unreachable"); n != 1 {
		t.Errorf("stderr says unreachable %d times, want once:\n%s", n, stderr)
	}
	if n := strings.Count(stderr, "\n"); n > 5 {
		t.Errorf("stderr has %d lines for one cause, want at most 5:\n%s", n, stderr)
	}
	n := len(certify.Requirements())
	if !strings.Contains(stderr, fmt.Sprintf("\nidemcheck: INCONCLUSIVE · requirements (%d): 0 PASS, 0 FAIL, %d INCONCLUSIVE", n, n)) || !strings.Contains(stderr, fmt.Sprintf("all %d requirements", n)) {
		t.Errorf("stderr does not end with the verdict after one line for all %d requirements:\n%s", n, stderr)
	}
}

// absProfile is profile as an absolute path, for a run in another
// directory.
func absProfile(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(profile)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
