package mutants

import "github.com/idemcheck/idemcheck/sut/provider"

// The provider mutants of response headers, declines and in-flight
// mismatches (issue 10, items 4 and 5).
func init() {
	register(Mutant{
		Name:        "replay-drops-location",
		Description: "a replay of a 201 carries no Location header, which the first answer had",
		Invariant:   "replay-consistent", MinSteps: 2,
		Class:    "a replay rebuilt from the stored body alone, without the first answer's headers (draft §2.6: the replay is the first response)",
		Provider: func(cfg *provider.Config) { cfg.Planted.ReplayDropsLocation = true },
	})
	register(Mutant{
		Name:        "decline-not-stored-then-charge",
		Description: "a decline is not stored and its body names no decline id: run again it reads exactly like a replay, and the same key with another card charges",
		Invariant:   "replay-consistent", MinSteps: 2,
		Class:    "only successes stored, with id-less decline bodies that hide the rerun (seed article 004, \"Response content'i de kaydet\")",
		Provider: func(cfg *provider.Config) { cfg.Planted.DeclineNotStored = true },
	})
	register(Mutant{
		Name:        "declined-key-recharges",
		Description: "another card under a declined key is processed as a new request and charges, instead of 422",
		Invariant:   "mismatch-rejected", MinSteps: 3,
		Class:    "fingerprint checked only for successful keys (draft §2.5)",
		Provider: func(cfg *provider.Config) { cfg.Planted.DeclinedKeyRecharges = true },
	})
	register(Mutant{
		Name:        "inflight-mismatch-charges",
		Description: "another body under a key still in flight (a double click with another amount) is processed and charges, instead of 409 or 422",
		Invariant:   "replay-consistent", MinSteps: 2,
		Class:    "fingerprint compared only once the first request completed",
		Provider: func(cfg *provider.Config) { cfg.Planted.InflightMismatchCharges = true },
	})
	register(Mutant{
		Name:        "errors-not-problem-details",
		Description: "400, 409 and 422 answers are sent as application/json, not as problem details (application/problem+json)",
		Invariant:   "mismatch-rejected", MinSteps: 2,
		Class:    "error answers in an ad-hoc format (draft §2.7 error scenarios; RFC 9457)",
		Provider: func(cfg *provider.Config) { cfg.Planted.ErrorsNotProblemDetails = true },
	})
}
