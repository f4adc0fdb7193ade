package main_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// deviationRE finds a deviation's headline, report and replay lines in
// the output of certify or replay.
var deviationRE = regexp.MustCompile(`idemcheck: deviation \d+, FAIL: (\S+) violated after (\d+) shopper steps[^\n]*\n(?:[^\n]*\n)*?\s*report: (\S+)\n(?:[^\n]*\n)*?\s*replay: ([^\n]*)`)

// shopperSteps is the numbered step lines of a failure report's "Shopper
// steps" section: the drawn steps, without what the provider answered.
func shopperSteps(t *testing.T, md string) []string {
	t.Helper()
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	_, sec, _ := strings.Cut(string(b), "## Shopper steps\n")
	sec, _, _ = strings.Cut(sec, "\n## ")
	var out []string
	for line := range strings.SplitSeq(sec, "\n") {
		if regexp.MustCompile(`^\d+\. `).MatchString(line) {
			out = append(out, line)
		}
	}
	return out
}

// TestReplayOfACertifyFailure: the replay: line idemcheck certify prints
// for a deviation is an idemcheck command (no "from the repository root",
// no environment to set but the keys) which, run as printed from the same
// directory, fails again with the same invariant and the same shopper
// steps; the run prints its seed. Regression (issue 11): the line was the
// go test form's environment plus "idemcheck replay FAILFILE", without
// the certification's profile, and did not reproduce the failure.
func TestReplayOfACertifyFailure(t *testing.T) {
	url := serve(t, "--mutant", "no-fingerprint")
	dir := t.TempDir()
	prof, err := filepath.Abs(profile)
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr := idemcheckIn(t, dir, nil, "certify", url, "--profile", prof, "--checks", "40", "--seed", "1", "--report-dir", "reports")
	if code != 1 {
		t.Fatalf("certify: exit %d, want 1 (FAIL); stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "idemcheck: seed 1 (repeat this run with -seed 1)") {
		t.Errorf("certify does not print its seed:\n%s", stderr)
	}
	m := deviationRE.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("certify printed no deviation with a report and a replay line:\n%s", stderr)
	}
	invariant, steps, report, line := m[1], m[2], m[3], m[4]
	if invariant != "mismatch-rejected" {
		t.Errorf("deviation of %s, want mismatch-rejected", invariant)
	}
	args := strings.Fields(line)
	if len(args) < 3 || args[0] != "idemcheck" || args[1] != "replay" || strings.Contains(line, "repository root") || strings.Contains(line, "=") {
		t.Fatalf("replay line %q: want an idemcheck replay command with flags", line)
	}
	code, _, rstderr := idemcheckIn(t, dir, nil, args[1:]...)
	if code != 1 {
		t.Fatalf("%s: exit %d, want 1 (the failure came back); stderr:\n%s", line, code, rstderr)
	}
	r := deviationRE.FindStringSubmatch(rstderr)
	if r == nil {
		t.Fatalf("%s printed no deviation:\n%s", line, rstderr)
	}
	if r[1] != invariant || r[2] != steps {
		t.Errorf("replay: %s after %s steps, want %s after %s", r[1], r[2], invariant, steps)
	}
	// rapid runs a fail file once and never shrinks it: the replay does not
	// call its sequence minimal (it did, whatever the saving run had said).
	if !strings.Contains(rstderr, "not minimal: a replay") {
		t.Errorf("the replay's deviation is not labelled a replay:\n%s", rstderr)
	}
	want, got := shopperSteps(t, inDir(dir, report)), shopperSteps(t, inDir(dir, r[3]))
	if len(want) == 0 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("replayed steps differ:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The same line against the provider without the bug passes, and says
	// that the failure did not come back in the steps it ran and how to
	// tell a fix from a replay that went another way (a new user's replay
	// ran 3 of 7 steps and passed, with nothing saying so).
	fixed := append([]string(nil), args[1:]...)
	for i := range fixed {
		if fixed[i] == url {
			fixed[i] = serve(t)
		}
	}
	code, _, fstderr := idemcheckIn(t, dir, nil, fixed...)
	if code != 0 {
		t.Fatalf("%v: exit %d, want 0 (the failure did not come back); stderr:\n%s", fixed, code, fstderr)
	}
	if !regexp.MustCompile(`idemcheck replay: the failure did not come back in the \d+ steps the replay ran; against a provider in real time`).MatchString(fstderr) ||
		!strings.Contains(fstderr, "compare with the shopper steps of the failure's report") {
		t.Errorf("a passing replay does not say what it ran and how to tell:\n%s", fstderr)
	}
}

// inDir is path p as printed by a command run in dir: p itself when
// absolute (a report folder from IDEMCHECK_REPORT_DIR, as make test sets
// it), else under dir.
func inDir(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// TestReplayOfAFailFileThatReplaysNothing: a FAILFILE that is not one of
// rapid's is refused (exit 2) before anything runs, and one in rapid's
// format whose draws no longer fit the run (here: a single draw) replays
// no sequence: INCONCLUSIVE (exit 3), never PASS. Regression (breaker):
// both exited 0 with "OK, passed 0 tests", so a CI step that replays a
// broken or foreign fail file went green.
func TestReplayOfAFailFileThatReplaysNothing(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"garbage.fail": "not a fail file\n", "empty.fail": "# only a comment\n", "bad-draw.fail": "v1.3.0#1\nzero\n"} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := idemcheckIn(t, dir, nil, "replay", path)
		if code != 2 || !strings.Contains(stderr, "is not a rapid fail file") {
			t.Errorf("%s: exit %d, want 2 naming it; stderr:\n%s", name, code, stderr)
		}
	}
	code, _, stderr := idemcheckIn(t, dir, nil, "replay", dir)
	if code != 2 {
		t.Errorf("a folder as FAILFILE: exit %d, want 2; stderr:\n%s", code, stderr)
	}
	short := filepath.Join(dir, "short.fail")
	if err := os.WriteFile(short, []byte("# a fail file whose draws run out at once\nv1.3.0#1\n0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = idemcheckIn(t, dir, nil, "replay", short)
	if code != 3 || !strings.Contains(stderr, "replayed no sequence") {
		t.Errorf("a fail file that no longer fits: exit %d, want 3 (INCONCLUSIVE); stderr:\n%s", code, stderr)
	}
}
