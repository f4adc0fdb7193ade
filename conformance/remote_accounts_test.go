package conformance_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRemotePropertyWithTwoAccounts: against a URL whose profile declares
// `accounts: 2`, with IDEMCHECK_API_KEY_2, the property runs merchant B's
// probes through the second key: cmd/refprovider serving global-key-scope
// (one key space for every account) fails on key-scoped-per-account,
// judged from the answers and the second account's lookups; the reference
// provider, which scopes keys per account, passes the same seed.
func TestRemotePropertyWithTwoAccounts(t *testing.T) {
	raw, err := os.ReadFile("../profiles/reference.json")
	require.NoError(t, err)
	profile := filepath.Join(t.TempDir(), "two-accounts.json")
	require.NoError(t, os.WriteFile(profile, []byte(strings.Replace(string(raw), `"accounts": 1`, `"accounts": 2`, 1)), 0o644))
	for mutant, want := range map[string]string{"global-key-scope": "key-scoped-per-account", "": ""} {
		t.Run("mutant="+mutant, func(t *testing.T) {
			t.Parallel()
			url, _ := serveRefProvider(t, mutant)
			checks := "RAPID_CHECKS=60" // the mutant stops at its first failure
			if want == "" {
				checks = "RAPID_CHECKS=25" // real time: enough for merchant B's probes (about one sequence in four)
			}
			out, failed, dir := runConformance(t, "1", "IDEMCHECK_PROVIDER="+url, "IDEMCHECK_PROFILE="+profile, "IDEMCHECK_MUTANT=",
				"IDEMCHECK_API_KEY=sk_test_idemcheck_merchant_a", "IDEMCHECK_API_KEY_2=sk_test_idemcheck_merchant_b2",
				"IDEMCHECK_MAX_REQUESTS=20000", "IDEMCHECK_MAX_CHARGES=10000", checks, "RAPID_SHRINKTIME=3s", "IDEMCHECK_MAX_DEVIATIONS=1")
			if want == "" {
				require.False(t, failed, "the reference provider scopes keys per account; output:\n%s", out)
				require.Regexp(t, `key-scoped-per-account\s+evaluated\s+\d+ times over\s+[1-9]\d* keys resent by another account`, out, "merchant B's probes were sent and judged")
				return
			}
			require.True(t, failed, "%s must fail the property against a URL with two accounts; output:\n%s", mutant, out)
			require.Equal(t, want, readKill(t, "url", out, failed, dir).invariant, out)
		})
	}
}
