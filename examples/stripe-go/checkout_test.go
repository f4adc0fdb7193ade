package stripecheckout_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/checkout"
	"github.com/idemcheck/idemcheck/conformance"
	"github.com/idemcheck/idemcheck/internal/childfail"
	"github.com/idemcheck/idemcheck/reports"

	stripecheckout "github.com/idemcheck/idemcheck/examples/stripe-go"
)

// TestMain runs 1000 sequences by default (RAPID_CHECKS or -rapid.checks
// for another count): a sequence on virtual time costs about 10 ms here.
func TestMain(m *testing.M) {
	flag.Parse()
	explicit := os.Getenv("RAPID_CHECKS") != ""
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "rapid.checks" })
	if !explicit {
		_ = flag.Set("rapid.checks", "1000")
	}
	os.Exit(m.Run())
}

// variantVar selects the variant TestStripeCheckout certifies (default
// the correct one); TestMistakesAreCaught sets it in its child process.
const variantVar = "STRIPE_CHECKOUT_VARIANT"

// TestStripeCheckout certifies the stripe-go checkout against the
// embedded provider speaking Stripe's API: what a team on Stripe adds to
// its own tests (docs/checkout.md). The correct variant passes, with
// every invariant that judges the client judged.
func TestStripeCheckout(t *testing.T) {
	variant := os.Getenv(variantVar)
	if variant == "" {
		variant = stripecheckout.Correct
	}
	stats := conformance.CheckClient(t, func(env checkout.Env) (checkout.Client, error) {
		return stripecheckout.New(variant, env)
	}, conformance.WithDialect("stripe"), conformance.WithTimings(conformance.Timings{
		TotalTimeout: stripecheckout.CallTimeout, AbandonAfter: stripecheckout.AbandonAfter}))
	if variant != stripecheckout.Correct || t.Failed() {
		return
	}
	verdicts := map[string]reports.InvariantResult{}
	for _, r := range stats.Results() {
		verdicts[r.Name] = r
	}
	assert.GreaterOrEqual(t, stats.Sequences(), 1000, "at least 1000 sequences")
	for _, name := range []string{conformance.KeyFormat, conformance.OneKeyPerIntent, conformance.NoUnsafeRetry, conformance.ConflictNeverFinal,
		conformance.AtMostOneChargePerOrder, conformance.BooksBalance, conformance.ReconciliationConverges} {
		assert.Equal(t, reports.Pass, verdicts[name].Verdict, "%s: %s", name, verdicts[name].Reason)
		assert.Positive(t, verdicts[name].Subjects, "%s judged something", name)
	}
}

// TestMistakesAreCaught runs TestStripeCheckout in a child process with
// each mistaken variant and asserts that it fails on an invariant that
// names its mistake — two charges for one order, an unknown outcome
// answered as final, or two keys for one intent — with a counterexample
// of at most 3 shopper steps, and a curl script that replays the SDK's
// forms. The naive variant (the SDK's keys, one call per click, errors
// final) is caught on two charges or an unknown outcome read as final;
// the careful one (a 400, 429 or 503 final, though the SDK shows only its
// last try's error, and a request of the process that crashed may still
// be charging) on the same, or on books-balance: seed 3 meets a crash
// mid-checkout, a resend of the stored key answered 503, the intent
// given up, and the first request's charge landing after it (2 steps).
func TestMistakesAreCaught(t *testing.T) {
	for variant, want := range map[string][]string{
		stripecheckout.Naive:   {conformance.AtMostOneChargePerOrder, conformance.ConflictNeverFinal, conformance.OneKeyPerIntent},
		stripecheckout.Careful: {conformance.AtMostOneChargePerOrder, conformance.ConflictNeverFinal, conformance.BooksBalance},
	} {
		t.Run(variant, func(t *testing.T) {
			t.Parallel()
			rep, out := childfail.Run(t, "TestStripeCheckout", []string{"-rapid.seed=3"},
				variantVar+"="+variant, "RAPID_CHECKS=1000", "IDEMCHECK_PARALLEL=1")
			t.Logf("%s: %s after %d shopper steps", variant, rep.Invariant, rep.StepCount)
			assert.Contains(t, want, rep.Invariant, "output:\n%s", out)
			assert.LessOrEqual(t, rep.StepCount, 3, "the counterexample has at most 3 shopper steps; output:\n%s", out)
			curl, err := os.ReadFile(filepath.Join(rep.Dir, "failure.curl.sh"))
			require.NoError(t, err)
			assert.True(t, strings.Contains(string(curl), "/v1/payment_intents") && strings.Contains(string(curl), "application/x-www-form-urlencoded"),
				"the curl script replays the forms the SDK sent:\n%s", curl)
		})
	}
}
