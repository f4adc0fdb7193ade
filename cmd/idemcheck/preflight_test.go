package main_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestCertifyPropertyPreflightRedirectSaysWhy: a provider that answers
// the certification's first lookup with an empty charge list, then
// redirects everything, leaves the property's own preflight redirected:
// every invariant on the page says it was not judged because that
// preflight failed (a redirect), not "never evaluated". Regression (issue
// 22, item 10).
func TestCertifyPropertyPreflightRedirectSaysWhy(t *testing.T) {
	var lookups atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && lookups.Add(1) == 1 {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"data":[]}`))
			return
		}
		http.Redirect(w, r, "http://127.0.0.1:9/elsewhere", http.StatusFound)
	}))
	t.Cleanup(srv.Close)
	code, stdout, stderr := idemcheck(t, nil, "certify", "--budget-requests", "400", "--budget-duration", "2m", "--report-dir", t.TempDir(), srv.URL)
	if code != 3 {
		t.Errorf("exit %d, want 3 (INCONCLUSIVE); stderr:\n%s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(strings.TrimSpace(stdout)), "certification.json"))
	if err != nil {
		t.Fatalf("%v; stderr:\n%s", err, stderr)
	}
	var c struct {
		Invariants []struct{ Name, Verdict, Reason string }
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Invariants) == 0 {
		t.Fatalf("the page lists no invariant; stderr:\n%s", stderr)
	}
	for _, i := range c.Invariants {
		if i.Verdict == "INCONCLUSIVE" && (!strings.Contains(i.Reason, "preflight") || !strings.Contains(i.Reason, "redirect")) {
			t.Errorf("%s: INCONCLUSIVE %q, want it to say the property's preflight was redirected", i.Name, i.Reason)
		}
		if i.Verdict == "PASS" {
			t.Errorf("%s: PASS, though the property never ran", i.Name)
		}
	}
}
