package conformance_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/checkout"
	"github.com/idemcheck/idemcheck/conformance"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/remote"
	"github.com/idemcheck/idemcheck/sut/service"
)

// A provider team certifies its sandbox from its own go test: the
// requirement list, then the property, within budgets; the page's path is
// in the result. (The function a test would be: it needs a *testing.T, so
// it is shown, not run; examples/usage runs it against a loopback URL.)
func ExampleCertifyProvider() {
	testSandbox := func(t *testing.T) {
		res := conformance.CertifyProvider(t, conformance.Provider{
			URL:       "https://sandbox.payments.example",
			Profile:   "profiles/our-sandbox.json",
			APIKeyEnv: "SANDBOX_API_KEY",
			Budgets:   conformance.Budgets{Requests: 5000, Charges: 2000, Duration: 20 * time.Minute},
		})
		t.Logf("%s: %s", res.Overall(), res.Paths.Markdown) // FAIL verdicts have failed t already
	}
	_ = testSandbox
}

// Validate refuses what CertifyProvider would refuse, sending nothing: here
// a live-looking key (sk_live_, pk_live_, rk_live_, in any case).
func ExampleProvider_Validate() {
	p := conformance.Provider{URL: "http://127.0.0.1:8080", APIKey: "SK_LIVE_0123"}
	err := p.Validate()
	fmt.Println(errors.Is(err, remote.ErrLiveCredential))
	// Output: true
}

// A checkout team checks its own Go client: a constructor that sends
// through the harness's http.Client and reads its clock (checkout.Env).
// (Shown, not run; examples/usage runs a complete client.)
func ExampleCheckClient() {
	testMyCheckout := func(t *testing.T, newShop checkout.New) {
		stats := conformance.CheckClient(t, newShop, conformance.WithTimings(conformance.Timings{TotalTimeout: 10 * time.Second}))
		for _, r := range stats.Results() {
			if r.Verdict == reports.Fail {
				t.Errorf("%s: %s", r.Name, r.Reason)
			}
		}
	}
	_ = testMyCheckout
}

// A checkout service in any language is checked over HTTP: service.Command
// starts it with the provider's URL in IDEMCHECK_PROVIDER_URL and waits for
// its "listening on http://127.0.0.1:PORT" line (docs/client-api.md).
// (Shown, not run: it starts a process.)
func ExampleCheckService() {
	testMyService := func(t *testing.T) {
		conformance.CheckService(t, service.Command("./bin/shop"),
			conformance.WithService(conformance.ServiceOptions{CallTimeout: 5 * time.Second}))
	}
	_ = testMyService
}

// The main job from a test of your own: the environment's configuration
// (IDEMCHECK_PROVIDER, IDEMCHECK_MUTANT, …) with a field set in Go over
// it, then the per-invariant summary. (Shown, not run: make conformance
// runs TestConformance, which is this.)
func ExampleRun() {
	testConformance := func(t *testing.T) {
		cfg, err := conformance.FromEnv()
		if err != nil {
			t.Fatal(err)
		}
		cfg.MaxOrders = 2
		stats := conformance.Run(t, cfg)
		t.Log(stats.Summary())
	}
	_ = testConformance
}

// A baseline lists what a team already knows, so CI fails on new
// deviations only: a category, an invariant's name (every violation of
// it), or a certification requirement's id.
func ExampleParseBaseline() {
	b := conformance.ParseBaseline([]byte("# known deviations (ticket PAY-123)\nmismatch-rejected\nreused-key-other-body-refused\n"))
	v := &conformance.ViolationError{Invariant: conformance.MismatchRejected, Category: "mismatch-rejected: …"}
	fmt.Println(len(b), b.Knows(v))
	// Output: 2 true
}
