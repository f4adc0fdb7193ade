package conformance_test

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/conformance"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/provider/server"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// inProcessLimits are the budgets against the in-process reference
// provider: room for the requirements and the rapid property's 100
// sequences.
var inProcessLimits = remote.Limits{MaxRequests: 50000, MaxCharges: 20000, MaxDuration: 8 * time.Minute}

// TestCertify certifies a provider: the fixed requirement list, then the
// rapid property with the reference client against it. It writes a run
// folder under the report directory (certification.md, .json, .junit.xml,
// run.json), updates index.md, appends the page to GITHUB_STEP_SUMMARY
// when set, and prints one line per requirement as it completes.
//
// With IDEMCHECK_PROVIDER an http(s) URL it certifies that provider
// (IDEMCHECK_DIALECT, IDEMCHECK_API_KEY, IDEMCHECK_API_KEY_2,
// IDEMCHECK_PROFILE and the IDEMCHECK_MAX_* budgets apply) and fails on
// any FAIL verdict. Otherwise it serves cmd/refprovider's handler in
// process on a loopback port and certifies that: every requirement must
// PASS, or be INCONCLUSIVE where the profile (a 24 h window) or the setup
// (no second key) rules it out, and the property must pass.
func TestCertify(t *testing.T) {
	cfg, err := remote.FromEnv()
	require.NoError(t, err)
	inProcess := cfg.BaseURL == ""
	var p conformance.Provider // the environment's provider, budgets and report folder
	if inProcess {
		s, err := server.Start(refProviderHandler(t))
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		p.URL = s.URL
		p.Budgets = conformance.Budgets{Requests: inProcessLimits.MaxRequests, Charges: inProcessLimits.MaxCharges, Duration: inProcessLimits.MaxDuration}
		if cfg.ProfilePath == "" {
			// refprovider publishes profiles/reference.json
			// (TestShippedProfiles); a URL without a profile is
			// judged against the draft alone.
			p.Profile = "../profiles/reference.json"
		}
		if os.Getenv("IDEMCHECK_TIME_SCALE") == "" {
			p.TimeScale = conformance.DefaultTimeScale
		}
		// Two merchants, so that key-not-replayed-across-accounts is
		// judged: the reference scopes keys per account (draft §5).
		if cfg.APIKey == "" && cfg.SecondAPIKey == "" {
			p.APIKey, p.SecondAPIKey = "sk_test_idemcheck_merchant_a", "sk_test_idemcheck_merchant_b"
		}
	}
	cert := conformance.CertifyProvider(t, p)
	for _, r := range cert.Requirements {
		if inProcess && r.Verdict == reports.Inconclusive {
			t.Errorf("%s: INCONCLUSIVE against the in-process reference provider: %s", r.ID, r.Reason)
		}
		lifecycle := r.ID == certify.ReqSlowCreate || r.ID == certify.ReqRestartHeld || r.ID == certify.ReqRestartOnce || r.ID == certify.ReqOutageRefused || r.ID == certify.ReqOutageReplayed
		if inProcess && r.Verdict == reports.NotJudged && r.ID != certify.ReqRetention && !lifecycle { // no hooks in process
			t.Errorf("%s: NOT JUDGED against the in-process reference provider, which offers everything but a retention window short enough to wait out: %s", r.ID, r.Reason)
		}
	}
	if inProcess {
		assert.NotEqual(t, reports.Fail, cert.Overall(), "the requirements and the rapid property must pass against the in-process reference provider")
		assert.Positive(t, cert.Coverage.Sequences, "the property ran sequences against the remote path")
	}
	assert.Len(t, cert.Requirements, len(certify.Requirements()))
}
