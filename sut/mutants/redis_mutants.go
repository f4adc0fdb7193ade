package mutants

import "github.com/idemcheck/idemcheck/sut/provider/redisstore"

// The Redis store mutants: the glue bugs users ship around seed article
// 004's Redis design. They run with the provider on Redis
// (IDEMCHECK_PROVIDER_STORE=redis), in real time.
func init() {
	register(Mutant{
		Name:        "redis-get-then-set",
		Description: "the Redis store looks the key up, processes, then stores: no SET NX, so a retry that overlaps a slow charge charges again",
		Invariant:   "replay-consistent", MinSteps: 2,
		Class:      "look-up-then-set without a lock (seed article 004, \"Race condition'u kaçırmayın\")",
		RedisStore: func(cfg *redisstore.Config) { cfg.Planted.GetThenSet = true },
	})
	register(Mutant{
		Name:        "redis-lease-too-short",
		Description: "the in-flight lock's lease (100 ms) is shorter than a slow charge: it expires while the charge runs and the retry charges again",
		Invariant:   "replay-consistent", MinSteps: 2,
		Class:      "lock lease shorter than the work it guards",
		RedisStore: func(cfg *redisstore.Config) { cfg.Planted.LeaseTooShort = true },
	})
	register(Mutant{
		Name:        "redis-ttl-seconds-as-ms",
		Description: "the response's TTL is the retention in seconds passed as PX milliseconds: keys vanish a thousand times too early (24 h → 86 s), so a retry after a lost response charges again",
		Invariant:   "replay-consistent", MinSteps: 2,
		Class:      "TTL unit mistake (seed article 004, \"TTL'i doğru ayarla\")",
		RedisStore: func(cfg *redisstore.Config) { cfg.Planted.TTLSecondsAsMs = true },
	})
	register(Mutant{
		Name:        "redis-lock-is-response-ttl",
		Description: "the in-flight lock gets the retention window as its TTL instead of a lease: a provider killed while it holds a key blocks it (409) for the whole window",
		Invariant:   "replay-consistent", MinSteps: 4,
		Class:      "lock without a lease of its own (a dead worker's lock outlives it)",
		RedisStore: func(cfg *redisstore.Config) { cfg.Planted.LockIsResponseTTL = true },
	})
	register(Mutant{
		Name:        "redis-process-without-lock",
		Description: "a failed SET NX (Redis unreachable) is taken as \"key free\": the request is processed without a lock and its result is never stored, so a retry charges again",
		Invariant:   "replay-consistent", MinSteps: 2,
		Class:      "store error treated as a cache miss",
		RedisStore: func(cfg *redisstore.Config) { cfg.Planted.ProcessWithoutLock = true },
	})
}
