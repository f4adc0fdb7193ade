package mutants

import "github.com/idemcheck/idemcheck/sut/provider"

// The request-shape and account mutants (issue 10, items 1–2), served by
// the embedded provider: what real middlewares do when they key the store
// by the raw URL, fingerprint the raw bytes, or keep one key space for
// every tenant.
func init() {
	register(Mutant{
		Name:        "path-sensitive-key",
		Description: "the key store is keyed by the raw URL: the same request under one key to /v1/charges/ or with an unrelated query parameter charges again",
		Invariant:   "equivalent-requests-agree", MinSteps: 3,
		Class:    "idempotency middleware keyed by the request URI, not the resource (draft §2.4)",
		Provider: func(cfg *provider.Config) { cfg.Planted.PathSensitiveKey = true },
	})
	register(Mutant{
		Name:        "order-sensitive-fingerprint",
		Description: "the fingerprint is over the raw body bytes: the same fields in another order or spacing under one key get 422",
		Invariant:   "equivalent-requests-agree", MinSteps: 3,
		Class:    "fingerprint over the bytes, not the payload's content (draft §2.4)",
		Provider: func(cfg *provider.Config) { cfg.Planted.OrderSensitiveFingerprint = true },
	})
	register(Mutant{
		Name:        "global-key-scope",
		Description: "the key store ignores the account: merchant B sending a key merchant A used gets A's stored response",
		Invariant:   "key-scoped-per-account", MinSteps: 3,
		Class:    "cross-tenant key space (draft §5: the cache key must include client-specific attributes)",
		Provider: func(cfg *provider.Config) { cfg.Planted.GlobalKeyScope = true },
	})
}
