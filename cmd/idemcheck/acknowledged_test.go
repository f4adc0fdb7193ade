package main_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/sut/provider/server"
)

// TestCertifyAcknowledgedLimitExitsZero: against the reference provider
// behind a gateway that answers a create without an Idempotency-Key 503,
// missing-key-refused stays INCONCLUSIVE (a transient answer is no
// verdict) whatever the run does, so certify exits 3. A baseline listing
// it by id turns it ACKNOWLEDGED, its reason still shown, and the run,
// whose only open item it is, exits 0. Regression
// (issue 24, item 7): a baseline could not acknowledge an INCONCLUSIVE
// requirement, and such a provider never got a green run. The page and
// certification.json name the run's seed (item 8).
func TestCertifyAcknowledgedLimitExitsZero(t *testing.T) {
	h, err := server.Handler("", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.Start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && len(r.Header.Values("Idempotency-Key")) == 0 { // no header; an empty one is empty-key-refused's
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"title":"Service Unavailable","status":503}`))
			return
		}
		h.ServeHTTP(w, r)
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	dir := t.TempDir()
	// One sequence at a time: seed 1's first 10 sequences give every
	// invariant a subject; lanes draw other sequences from the seed.
	args := []string{"certify", s.URL, "--profile", absProfile(t), "--checks", "10", "--seed", "1", "--concurrency", "1", "--report-dir", filepath.Join(dir, "reports")}
	code, stdout, stderr := idemcheckIn(t, dir, nil, args...)
	if code != 3 {
		t.Fatalf("without the baseline: exit %d, want 3 (INCONCLUSIVE); stderr:\n%s", code, stderr)
	}
	var open []string
	for _, r := range certification(t, strings.TrimSpace(stdout)).Requirements {
		if r.Verdict == "INCONCLUSIVE" {
			open = append(open, r.ID)
		}
	}
	if len(open) == 0 {
		t.Fatalf("no requirement INCONCLUSIVE behind the gateway; stderr:\n%s", stderr)
	}
	baseline := filepath.Join(dir, "baseline.txt")
	if err := os.WriteFile(baseline, []byte("# the gateway answers a keyless create 503\n"+strings.Join(open, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = idemcheckIn(t, dir, nil, append(args, "--baseline", baseline)...)
	if code != 0 {
		t.Fatalf("with %v acknowledged: exit %d, want 0; stderr:\n%s", open, code, stderr)
	}
	page := strings.TrimSpace(stdout)
	for _, r := range certification(t, page).Requirements {
		if r.Verdict == "INCONCLUSIVE" {
			t.Errorf("%s: INCONCLUSIVE, though the baseline lists it", r.ID)
		}
	}
	md, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	// The seed is on the page and in certification.json (issue 24, item 8).
	js, err := os.ReadFile(filepath.Join(filepath.Dir(page), "certification.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), `"seed": 1,`) {
		t.Errorf("certification.json names no seed 1")
	}
	for _, want := range []string{"# idemcheck certification: KNOWN", "| ACKNOWLEDGED |", "acknowledged: listed in the baseline; ", "; seed `1`"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}
