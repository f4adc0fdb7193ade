package stripecheckout_test

import (
	"os"
	"testing"

	"github.com/idemcheck/idemcheck/checkout"
	"github.com/idemcheck/idemcheck/conformance"

	stripecheckout "github.com/idemcheck/idemcheck/examples/stripe-go"
)

// variantVar selects the variant TestStripeCheckout certifies (default
// the correct one); TestNaiveIsCaught sets it in its child process.
const variantVar = "STRIPE_CHECKOUT_VARIANT"

// TestStripeCheckout certifies the stripe-go checkout against the
// embedded provider speaking Stripe's API.
func TestStripeCheckout(t *testing.T) {
	variant := os.Getenv(variantVar)
	if variant == "" {
		variant = stripecheckout.Correct
	}
	conformance.CheckClient(t, func(env checkout.Env) (checkout.Client, error) {
		return stripecheckout.New(variant, env)
	}, conformance.WithDialect("stripe"), conformance.WithTimings(conformance.Timings{
		TotalTimeout: stripecheckout.CallTimeout, AbandonAfter: stripecheckout.AbandonAfter}))
}
