package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCertifyDoesNotShrinkWhatARequirementShowed (issue 24, item 2): a
// deviation of an invariant that a requirement of the same certification
// FAILed on is reproduced once and not shrunk again, only its shortest
// shapes tried, for tens of requests ("not minimal: known (requirement …
// FAILed on …)"), and certification.json counts what
// shrinking spent, per deviation and in the coverage, which the page's
// coverage line shows. Regression: against replay-new-charge, whose
// replay-returns-first-response FAILs in the requirements, the property
// shrank the same replay-consistent deviation for hundreds of checks
// (5.5 of 6 minutes against a provider taking 300 ms an answer), and
// nothing counted it.
func TestCertifyDoesNotShrinkWhatARequirementShowed(t *testing.T) {
	url := serve(t, "--mutant", "replay-new-charge")
	dir := t.TempDir()
	code, stdout, stderr := idemcheckIn(t, dir, nil, "certify", url, "--profile", absProfile(t), "--checks", "20", "--seed", "1", "--report-dir", "reports")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (FAIL); stderr:\n%s", code, stderr)
	}
	page := inDir(dir, strings.TrimSpace(stdout))
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(page), "certification.json"))
	if err != nil {
		t.Fatal(err)
	}
	type spend struct{ Attempts, Requests, Charges int }
	var c struct {
		Requirements []struct{ ID, Verdict string }
		Coverage     struct{ Shrink spend }
		Deviations   []struct {
			Invariant, Minimal string
			Shrink             *spend
		}
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	failed := map[string]bool{}
	for _, r := range c.Requirements {
		failed[r.ID] = r.Verdict == "FAIL"
	}
	if !failed["replay-returns-first-response"] {
		t.Fatalf("replay-returns-first-response did not FAIL against replay-new-charge: %+v", c.Requirements)
	}
	var total spend
	known := 0
	for _, d := range c.Deviations {
		if d.Shrink == nil {
			t.Fatalf("deviation of %s: no shrink spend in certification.json", d.Invariant)
		}
		total.Attempts, total.Requests, total.Charges = total.Attempts+d.Shrink.Attempts, total.Requests+d.Shrink.Requests, total.Charges+d.Shrink.Charges
		if d.Invariant != "replay-consistent" {
			continue
		}
		known++
		if !strings.HasPrefix(d.Minimal, "not minimal: known (requirement ") {
			t.Errorf("replay-consistent's deviation: %q, want it known from the requirement that FAILed on it", d.Minimal)
		}
		if d.Shrink.Attempts < 1 || d.Shrink.Attempts > 41 || d.Shrink.Requests == 0 || d.Shrink.Requests >= 100 {
			t.Errorf("replay-consistent's deviation spent %+v shrinking, want its reproduction and at most 40 shortest shapes, tens of requests", *d.Shrink)
		}
	}
	if known == 0 {
		t.Fatalf("no deviation of replay-consistent: %+v\n%s", c.Deviations, stderr)
	}
	if c.Coverage.Shrink != total {
		t.Errorf("coverage's shrink spend %+v, want the deviations' sum %+v", c.Coverage.Shrink, total)
	}
	md, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if want := "shrinking: " + plural(total.Attempts, "attempt") + ", " + plural(total.Requests, "request") + ", " + plural(total.Charges, "charge") + "."; !strings.Contains(string(md), want) {
		t.Errorf("the page's coverage line does not say %q:\n%s", want, md)
	}
	if !strings.Contains(stderr, "idemcheck: shrinking replay-consistent: now ") || !strings.Contains(stderr, ", ended: known (requirement ") {
		t.Errorf("stderr does not say the shrink ended as known:\n%s", stderr)
	}
}

// plural is "1 attempt", "2 attempts".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
