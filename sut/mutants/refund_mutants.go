package mutants

import (
	"net/http"
	"strings"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/client"
	"github.com/idemcheck/idemcheck/sut/provider"
	"github.com/idemcheck/idemcheck/sut/wiremock"
)

// The refunds endpoint's mutants: a second idempotent endpoint (seed
// article 004 names /charges and /refunds) and the store that is global
// across endpoints.
func init() {
	register(Mutant{
		Name:        "keys-shared-across-endpoints",
		Description: "one key store for every endpoint: a charge's key sent to /v1/refunds answers 409 (in flight) for the whole retention window, so the refund never gets through",
		Invariant:   "key-scoped-per-endpoint", MinSteps: 3,
		Class:    "idempotency store global across endpoints (middleware keyed by the key alone)",
		Provider: func(cfg *provider.Config) { cfg.Planted.Refunds.SharedKeys = true },
	})
	register(Mutant{
		Name:        "refund-replays-charge",
		Description: "one key store for every endpoint, looked up by the key alone: a charge's key sent to /v1/refunds replays the charge's 201",
		Invariant:   "key-scoped-per-endpoint", MinSteps: 3,
		Class:    "stored response keyed without the endpoint: another operation's answer replayed",
		Provider: func(cfg *provider.Config) { cfg.Planted.Refunds.ReplaysCharge = true },
		WireMock: func(cfg *wiremock.Config) { cfg.Planted.RefundReplaysCharge = true },
	})
	register(Mutant{
		Name:        "refund-not-idempotent",
		Description: "the refunds endpoint ignores the Idempotency-Key: a retry after a lost response refunds again",
		Invariant:   "at-most-one-refund-per-intent", MinSteps: 3,
		Class:    "idempotency mounted on /charges only (seed article 004: /refunds needs it too)",
		Provider: func(cfg *provider.Config) { cfg.Planted.Refunds.NotIdempotent = true },
		WireMock: func(cfg *wiremock.Config) { cfg.Planted.RefundNotIdempotent = true },
	})
	register(Mutant{
		Name:        "refund-key-per-try",
		Description: "each retry of a refund carries a new Idempotency-Key, so a retry after a lost response is a second refund",
		Invariant:   "at-most-one-refund-per-intent", MinSteps: 3,
		Class: "key generated per HTTP try on the refunds path (seed article 000, first trap, on a second endpoint)",
		Client: func(cfg *client.Config) {
			newKey := cfg.NewKey
			seen := &triesSeen{n: map[triesKey]int{}}
			cfg.WrapTransport = func(next http.RoundTripper) http.RoundTripper {
				return rewriteKey{next: next, newKey: newKey, when: func(r *http.Request) bool {
					return strings.HasPrefix(r.URL.Path, models.RefundsPath) && seen.retry(r)
				}}
			}
		},
	})
}
