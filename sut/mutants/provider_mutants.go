package mutants

import (
	"time"

	"github.com/idemcheck/idemcheck/sut/provider"
)

// The provider mutants, served by the embedded provider: what seed article
// 004 warns about, and the draft's edge cases.
func init() {
	register(Mutant{
		Name:        "no-inflight-lock",
		Description: "check-then-act without an in-flight lock: two concurrent requests with one key both charge",
		Invariant:   "replay-consistent", MinSteps: 2,
		Class:    "race between concurrent retries (seed article 004, \"Race condition'u kaçırmayın\")",
		Provider: func(cfg *provider.Config) { cfg.Planted.NoInflightLock = true },
	})
	register(Mutant{
		Name:        "replay-new-charge",
		Description: "a completed key is processed again instead of replayed (a new charge id)",
		Invariant:   "replay-consistent", MinSteps: 2,
		Class:    "no idempotency store: a lost response plus a retry charges twice",
		Provider: func(cfg *provider.Config) { cfg.Planted.ReplayNewCharge = true },
	})
	register(Mutant{
		Name:        "conflict-after-completion",
		Description: "a completed key answers 409 instead of the stored response",
		Invariant:   "replay-consistent", MinSteps: 2,
		Class:    "completed requests reported as still in flight",
		Provider: func(cfg *provider.Config) { cfg.Planted.ConflictAfterCompletion = true },
	})
	register(Mutant{
		Name:        "no-fingerprint",
		Description: "the same key with another amount replays the first response instead of 422",
		Invariant:   "mismatch-rejected", MinSteps: 3,
		Class:    "no request fingerprint (draft §2.5)",
		Provider: func(cfg *provider.Config) { cfg.Planted.NoFingerprint = true },
	})
	register(Mutant{
		Name:        "errors-not-stored",
		Description: "only 2xx are stored: a decline retried under its key runs again (a new decline id) instead of being replayed, and the same key may then charge",
		Invariant:   "replay-consistent", MinSteps: 2,
		Class:    "storing only a success flag (seed article 004, \"Response content'i de kaydet\")",
		Provider: func(cfg *provider.Config) { cfg.Planted.ErrorsNotStored = true },
	})
	register(Mutant{
		Name:        "stuck-inflight",
		Description: "a request that failed before finishing leaves its key in flight forever: 409 on every retry",
		Invariant:   "replay-consistent", MinSteps: 2,
		Class:    "lock never released after a crash mid-request",
		Provider: func(cfg *provider.Config) { cfg.Planted.StuckInflight = true },
	})
	register(Mutant{
		Name:        "short-retention",
		Description: "keys are forgotten after 1 minute while 24 h is published: a late retry charges again",
		Invariant:   "replay-consistent", MinSteps: 3,
		LocalMinimum: "open an order, check it out with an unknown outcome, and reconcile during a checkout that resends its key 31 min later (3 steps, issue 28's reconcile-during-checkout) is minimal; " +
			"a checkout, time passing, and a retry (4 steps) is the shape most seeds find first",
		Class:    "retention window shorter than published (seed article 004, \"TTL'i doğru ayarla\")",
		Provider: func(cfg *provider.Config) { cfg.Retention = time.Minute },
	})
	register(Mutant{
		Name:        "quoted-key-distinct",
		Description: "the key is the raw header value, so \"abc\" and abc are two keys",
		Invariant:   "replay-consistent", MinSteps: 3,
		Class:    "Structured Field String not parsed (draft §2, RFC 9651)",
		Provider: func(cfg *provider.Config) { cfg.Planted.QuotedKeyDistinct = true },
	})
}
