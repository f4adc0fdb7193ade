package mutants

import (
	"github.com/idemcheck/idemcheck/sut/client"
	"github.com/idemcheck/idemcheck/sut/provider"
)

// The mutants of the hang-up fault and of stale keys (issue 10, items 6–7).
func init() {
	register(Mutant{
		Name:        "free-key-on-hangup",
		Description: "when the client hangs up mid-processing the charge is made but the key is released without storing the response: the retry charges again",
		Invariant:   "replay-consistent", MinSteps: 2,
		Class:    "a dropped connection treated as \"not processed\" (draft §2.6: the stored response answers every retry)",
		Provider: func(cfg *provider.Config) { cfg.Planted.FreeKeyOnHangUp = true },
	})
	register(Mutant{
		Name:        "stale-key-resend",
		Description: "an open attempt's key is resent at any age: with the reconciliation job down through a step past the retention window, the shopper's retry sends a key the provider has forgotten",
		Invariant:   "no-stale-key", MinSteps: 4,
		Class:  "key older than the provider's retention window (the reference client before issue 10)",
		Client: func(cfg *client.Config) { cfg.Planted.StaleKeyResend = true },
	})
}
