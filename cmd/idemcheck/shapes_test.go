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
// equivalent-requests-agree are INCONCLUSIVE with a reason, never PASS
// (nor, for the requirement, FAIL on the control's missing charge).
// Regression (outside tester): against the phantom the requirement
// FAILed and the invariant PASSed, counting shapes it had not judged.
func TestCertifyShapesWithoutACharge(t *testing.T) {
	for _, mode := range []stranger.Mode{stranger.Declines, stranger.Phantom} {
		t.Run(map[stranger.Mode]string{stranger.Declines: "declines", stranger.Phantom: "phantom"}[mode], func(t *testing.T) {
			p := &stranger.Provider{Mode: mode}
			url := stranger.Start(t, p)
			_, stdout, stderr := idemcheck(t, nil, "certify", url, "--checks", "10", "--seed", "1", "--report-dir", t.TempDir())
			page := strings.TrimSpace(stdout)
			b, err := os.ReadFile(filepath.Join(filepath.Dir(page), "certification.json"))
			if err != nil {
				t.Fatalf("no certification.json beside %q: %v; stderr:\n%s", page, err, stderr)
			}
			var c struct {
				Requirements []struct{ ID, Verdict, Reason string }
				Invariants   []struct{ Name, Verdict, Reason string }
			}
			if err := json.Unmarshal(b, &c); err != nil {
				t.Fatal(err)
			}
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
					if r.Verdict != "INCONCLUSIVE" || r.Reason == "" {
						t.Errorf("invariant %s: %s (%q), want INCONCLUSIVE with a reason", r.Name, r.Verdict, r.Reason)
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
