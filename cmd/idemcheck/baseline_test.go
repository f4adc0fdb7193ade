package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCertifyBaselinedRequirementIsKnown: a baseline that names the
// requirements a provider knowingly fails (no-fingerprint: a reused key
// with another body is replayed, not refused) and the invariant its
// property breaks turns those FAILs into KNOWN, evidence and reason kept
// ("known: listed in the baseline"), and certify exits 0; a listed
// requirement that passes stays PASS and its entry is reported unused on
// the page. Without the baseline the same run exits 1. Regression
// (outside tester): a requirement id in the baseline was ignored, so such
// a provider could never exit 0.
func TestCertifyBaselinedRequirementIsKnown(t *testing.T) {
	url := serve(t, "--mutant", "no-fingerprint")
	dir := t.TempDir()
	// no-fingerprint also answers a large body that differs only in its
	// last bytes with the first one's stored response: the same bug, a
	// requirement of its own (large-body-fingerprinted-whole).
	listed := []string{"reused-key-other-body-refused", "inflight-mismatch-refused", "replay-returns-first-response", "large-body-fingerprinted-whole"}
	baseline := filepath.Join(dir, "baseline.txt")
	content := "# known deviations of the sandbox\n" + strings.Join(listed, "\n") + "\nmismatch-rejected\n"
	if err := os.WriteFile(baseline, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	// One sequence at a time: seed 1's first 10 sequences give every
	// invariant a subject; lanes draw other sequences from the seed.
	args := []string{"certify", url, "--profile", absProfile(t), "--checks", "10", "--seed", "1", "--concurrency", "1", "--report-dir", filepath.Join(dir, "reports")}

	code, _, stderr := idemcheckIn(t, dir, nil, args...)
	if code != 1 {
		t.Errorf("without the baseline: exit %d, want 1 (FAIL); stderr:\n%s", code, stderr)
	}

	code, stdout, stderr := idemcheckIn(t, dir, nil, append(args, "--baseline", baseline)...)
	if code != 0 {
		t.Errorf("with the baseline: exit %d, want 0 (KNOWN); stderr:\n%s", code, stderr)
	}
	page := strings.TrimSpace(stdout)
	for _, r := range certification(t, page).Requirements {
		switch {
		case r.ID == "reused-key-other-body-refused" && r.Verdict != "KNOWN":
			t.Errorf("%s: %s, want KNOWN (the baseline lists it)", r.ID, r.Verdict)
		case r.ID == "replay-returns-first-response" && r.Verdict != "PASS":
			t.Errorf("%s: %s, want PASS (listed, but it passes)", r.ID, r.Verdict)
		case r.Verdict == "FAIL":
			t.Errorf("%s: FAIL", r.ID)
		case r.Verdict == "KNOWN" && !slices.Contains(listed, r.ID):
			t.Errorf("%s: KNOWN, but the baseline does not list it", r.ID)
		}
	}
	md, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# idemcheck certification: KNOWN",
		"| KNOWN | `reused-key-other-body-refused` | SHOULD | draft |",
		"known: listed in the baseline; the same key with another amount answered",
		"(#evidence-reused-key-other-body-refused)",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	_, unused, _ := strings.Cut(string(md), "\nBaseline entries unused")
	unused, _, _ = strings.Cut(unused, "\n")
	if !strings.Contains(unused, "`replay-returns-first-response`") || strings.Contains(unused, "`reused-key-other-body-refused`") {
		t.Errorf("the page's unused baseline entries %q: want replay-returns-first-response (it passed), not reused-key-other-body-refused", unused)
	}
	if !strings.Contains(stderr, "KNOWN reused-key-other-body-refused: known: listed in the baseline") || !strings.Contains(stderr, "idemcheck: KNOWN · "+requirementsCounted) {
		t.Errorf("stderr does not show the requirement and the run KNOWN:\n%s", stderr)
	}
}

// TestCertifyBaselineOfCausesExitsZero: the page opens with causes, so a
// baseline may list what it read there. Against replay-new-charge, one
// run names its causes; the same run with a baseline of those cause ids
// alone exits 0 (KNOWN), every FAIL that showed them KNOWN and none left
// unused. Regression (issue 24's Done-when, breaker): cause ids were no
// baseline entries — the run exited 1 and listed them as unused.
// (60 checks: seed 1's first 10 leave mismatch-rejected and
// reconciliation-converges without a subject, INCONCLUSIVE.)
func TestCertifyBaselineOfCausesExitsZero(t *testing.T) {
	url := serve(t, "--mutant", "replay-new-charge")
	dir := t.TempDir()
	args := []string{"certify", url, "--profile", absProfile(t), "--checks", "60", "--seed", "1", "--concurrency", "1", "--report-dir", filepath.Join(dir, "reports")}
	code, stdout, stderr := idemcheckIn(t, dir, nil, args...)
	if code != 1 {
		t.Fatalf("without a baseline: exit %d, want 1 (FAIL); stderr:\n%s", code, stderr)
	}
	var first struct {
		Causes []struct{ ID string } `json:"causes"`
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(strings.TrimSpace(stdout)), "certification.json"))
	if err == nil {
		err = json.Unmarshal(b, &first)
	}
	if err != nil || len(first.Causes) == 0 {
		t.Fatalf("no causes in certification.json (%v):\n%s", err, b)
	}
	var ids []string
	for _, k := range first.Causes {
		ids = append(ids, k.ID)
	}
	baseline := filepath.Join(dir, "baseline.txt")
	if err := os.WriteFile(baseline, []byte("# the causes the page named\n"+strings.Join(ids, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = idemcheckIn(t, dir, nil, append(args, "--baseline", baseline)...)
	if code != 0 {
		t.Errorf("with a baseline of the causes %v: exit %d, want 0 (KNOWN); stderr:\n%s", ids, code, stderr)
	}
	var again struct {
		Unused []string `json:"baseline_unused"`
	}
	b, err = os.ReadFile(filepath.Join(filepath.Dir(strings.TrimSpace(stdout)), "certification.json"))
	if err == nil {
		err = json.Unmarshal(b, &again)
	}
	if err != nil || len(again.Unused) > 0 {
		t.Errorf("baseline_unused %v (%v), want none", again.Unused, err)
	}
}
