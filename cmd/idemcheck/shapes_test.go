package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/internal/stranger"
)

// TestCertifyShapesWithoutACharge: a provider that never charges —
// declining every create (402 with a card_declined body, nothing stored)
// or answering 201 with a charge it never creates — never produced the
// charge a request in another shape could repeat, so the requirement
// equivalent-request-shapes-agree and the property's invariant
// equivalent-requests-agree are INCONCLUSIVE with a reason (the invariant
// NOT JUDGED when a replay-consistent deviation explains it), never PASS
// (nor, for the requirement, FAIL on the control's missing charge).
// Regression (outside tester): against the phantom the requirement
// FAILed and the invariant PASSed, counting shapes it had not judged.
func TestCertifyShapesWithoutACharge(t *testing.T) {
	for _, mode := range []stranger.Mode{stranger.Declines, stranger.Phantom} {
		t.Run(map[stranger.Mode]string{stranger.Declines: "declines", stranger.Phantom: "phantom"}[mode], func(t *testing.T) {
			p := &stranger.Provider{Mode: mode}
			url := stranger.Start(t, p)
			_, stdout, stderr := idemcheck(t, nil, "certify", url, "--checks", "10", "--seed", "1", "--report-dir", t.TempDir())
			var c struct {
				Requirements []struct{ ID, Verdict, Reason string }
				Invariants   []struct{ Name, Verdict, Reason string }
			}
			readCertification(t, stdout, stderr, &c)
			seen := 0
			for _, r := range c.Requirements {
				if r.ID == "equivalent-request-shapes-agree" {
					seen++
					if r.Verdict != "INCONCLUSIVE" || r.Reason == "" {
						t.Errorf("requirement %s: %s (%q), want INCONCLUSIVE with a reason", r.ID, r.Verdict, r.Reason)
					}
				}
			}
			for _, r := range c.Invariants {
				if r.Name == "equivalent-requests-agree" {
					seen++
					// INCONCLUSIVE (held vacuously), or NOT JUDGED when the
					// property also found a replay-consistent deviation,
					// which leaves no key shown to replay (conformance
					// Stats.ruledOut); never PASS, always with the reason.
					if r.Verdict != "INCONCLUSIVE" && r.Verdict != "NOT JUDGED" || r.Reason == "" {
						t.Errorf("invariant %s: %s (%q), want INCONCLUSIVE or NOT JUDGED with a reason", r.Name, r.Verdict, r.Reason)
					}
				}
			}
			if seen != 2 {
				t.Errorf("found %d of the requirement and the invariant in the page, want both", seen)
			}
			if posts, _ := p.Received(); posts == 0 || p.Charges() != 0 {
				t.Errorf("the provider got %d creates and made %d charges, want some and none", posts, p.Charges())
			}
		})
	}
}

// TestCertifyDeterministicRawURLProvider: a deterministic provider that
// keys its store by the raw URL (a trailing slash charges again) fails
// equivalent-request-shapes-agree and the property's
// equivalent-requests-agree, and no deviation of it is put down to the
// provider's timing: its label is minimal or names its evidence
// (conformance/internal/run/minimal.go).
func TestCertifyDeterministicRawURLProvider(t *testing.T) {
	p := &stranger.Provider{Mode: stranger.RawURL}
	url := stranger.Start(t, p)
	code, stdout, stderr := idemcheck(t, nil, "certify", url, "--checks", "100", "--seed", "1", "--report-dir", t.TempDir())
	var c struct {
		Requirements []struct{ ID, Verdict string }
		Deviations   []struct{ Invariant, Minimal string }
	}
	readCertification(t, stdout, stderr, &c)
	if code != 1 {
		t.Errorf("exit %d, want 1 (FAIL)", code)
	}
	for _, r := range c.Requirements {
		if r.ID == "equivalent-request-shapes-agree" && r.Verdict != "FAIL" {
			t.Errorf("requirement %s: %s, want FAIL", r.ID, r.Verdict)
		}
	}
	found := false
	for _, d := range c.Deviations {
		found = found || d.Invariant == "equivalent-requests-agree"
		if strings.Contains(d.Minimal, "provider's timing") {
			t.Errorf("deviation %s labelled %q: a deterministic provider's timing is no cause", d.Invariant, d.Minimal)
		}
	}
	if !found {
		t.Errorf("no equivalent-requests-agree deviation in %+v", c.Deviations)
	}
}

// readCertification decodes into v the certification.json beside the page
// whose path idemcheck certify printed on stdout.
func readCertification(t *testing.T, stdout, stderr string, v any) {
	t.Helper()
	page := strings.TrimSpace(stdout)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(page), "certification.json"))
	if err != nil {
		t.Fatalf("no certification.json beside %q: %v; stderr:\n%s", page, err, stderr)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}
