// Package usage is a module outside idemcheck's own that uses only its
// public API, as a provider team and a checkout team would: it certifies
// a provider at a URL (the reference provider, served on loopback) and
// checks a small checkout client written against package checkout alone.
// make example-module runs its tests.
package usage

import (
	"net/http/httptest"
	"os"
	"testing"

	"github.com/idemcheck/idemcheck/conformance"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/provider/server"
)

// TestCertifySandbox is a provider team's test: certify the sandbox at a
// URL within budgets and gate on the verdict.
func TestCertifySandbox(t *testing.T) {
	h, err := server.Handler("", 0, 0) // stands in for the team's sandbox
	if err != nil {
		t.Fatal(err)
	}
	sandbox := httptest.NewServer(h)
	t.Cleanup(sandbox.Close)

	res := conformance.CertifyProvider(t, conformance.Provider{
		URL:       sandbox.URL,
		Profile:   "../../profiles/reference.json",
		Budgets:   conformance.Budgets{Requests: 5000, Charges: 2000},
		Checks:    5,
		TimeScale: conformance.DefaultTimeScale,
		ReportDir: t.TempDir(),
	})
	if v := res.Overall(); v == reports.Fail {
		t.Fatalf("certification %s: %s", v, res.Paths.Markdown)
	}
	if _, err := os.Stat(res.Paths.Markdown); err != nil {
		t.Fatalf("no certification page: %v", err)
	}
	for _, r := range res.Requirements {
		t.Logf("%s %s", r.Verdict, r.ID)
	}
}

// TestCheckMyClient is a checkout team's test: the property against its
// own client (client.go), on the embedded provider in virtual time.
func TestCheckMyClient(t *testing.T) {
	stats := conformance.CheckClient(t, newClient, conformance.WithConfig(conformance.Config{ReportDir: t.TempDir()}))
	for _, r := range stats.Results() {
		if r.Verdict == reports.Fail {
			t.Errorf("%s: %s", r.Name, r.Reason)
		}
	}
}
