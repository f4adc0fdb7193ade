package mutants

import (
	"time"

	"github.com/idemcheck/idemcheck/sut/provider"
)

// The provider mutants of issue 25's body, lookup, in-flight hint, stray
// header and slow request classes: each a deviation third-party
// idempotency layers were seen to make, which no random sequence of the
// property meets (its bodies are small and well formed, its lookups
// keyless, its headers the contract's, its processing never slower than
// a lock), so each names the certification requirement that FAILs on it;
// lock-expires-mid-processing is met by the property too (its drawn slow
// processing, 5 s or 15 s, outlasts the 500 ms lease while the client
// retries).
func init() {
	register(Mutant{
		Name:        "unparsable-body-holds-key",
		Description: "a body that does not parse, sent under a key, is answered 500 and leaves the key in flight for good: the same key with a good body never charges",
		Requirement: "unparsable-body-refused",
		Class:       "key taken before the body is read, never released when the handler fails (an answer never stored)",
		Provider:    func(cfg *provider.Config) { cfg.Planted.UnparsableBodyHoldsKey = true },
	})
	register(Mutant{
		Name:        "fingerprint-prefix-only",
		Description: "the fingerprint covers only the body's first 8 KiB: two bodies under one key that differ after it are the same request, and the second gets the first one's stored answer",
		Requirement: "large-body-fingerprinted-whole",
		Class:       "a peer middleware's size-limit scenario: fingerprint over a prefix of the payload (draft §2.4: over the payload)",
		Provider:    func(cfg *provider.Config) { cfg.Planted.FingerprintPrefix = 8 << 10 },
	})
	register(Mutant{
		Name:        "keyed-lookup-cached",
		Description: "a GET /v1/charges?merchant_reference= carrying an Idempotency-Key is answered from that key's first lookup: a reconciler sees {\"data\":[]} for a charge that exists",
		Requirement: "keyed-lookup-not-cached",
		Class:       "an idempotency cache in front of every method, as SDKs attach a key to every call (RFC 9110 §9.2.1: GET is safe; the key is for POST)",
		Provider:    func(cfg *provider.Config) { cfg.Planted.KeyedLookupCached = true },
	})
	register(Mutant{
		Name:        "inflight-409-no-retry-after",
		Description: "the 409 for a request still being processed carries no Retry-After: the client is not told when to ask again",
		Requirement: "inflight-conflict-retry-after",
		Class:       "an in-flight conflict without a hint (seed article 004's lock; docs/provider-api.md: 409 with Retry-After)",
		Provider:    func(cfg *provider.Config) { cfg.Planted.InflightNoRetryAfter = true },
	})
	register(Mutant{
		Name:        "stray-header-hangs",
		Description: "a request carrying X-Request-Id, a header the provider reads for its own purposes, hangs until its client gives up",
		Requirement: "stray-headers-ignored",
		Class:       "a layer that reads a client-settable header of its own (RFC 9110 §5.1: unrecognized fields SHOULD be ignored)",
		Provider:    func(cfg *provider.Config) { cfg.Planted.StrayHeaderHangs = "X-Request-Id" },
	})
	register(Mutant{
		Name:        "lock-expires-mid-processing",
		Description: "the in-flight lock's lease is 500 ms: a retry that arrives while a slow request (the slow trigger, 2 s) is still processing, after the lease, is processed again and charges twice",
		Requirement: "slow-request-charged-once",
		Invariant:   "replay-consistent", MinSteps: 2,
		Class:    "a lock lease shorter than processing (seed article 004's in-flight lock with a TTL; one layer's lock expires after 10 s)",
		Provider: func(cfg *provider.Config) { cfg.Planted.LockLease = 500 * time.Millisecond },
	})
}
