package mutants

import "github.com/idemcheck/idemcheck/sut/client"

// The store mutants: the reference client on its PostgreSQL attempt store
// (sut/client/pgstore) with the glue mistakes seed article 000 warns about
// once attempts live in a database (issue "Real stores", item 2). The
// harness selects the store, and the instances, each needs.
func init() {
	register(Mutant{
		Name:        "pg-key-after-send",
		Description: "the attempt row is committed without its key, which is written after the response; a crash while the request is out loses it and the restart resends the intent under a new key",
		Invariant:   "one-key-per-intent", MinSteps: 2,
		Class:       "key committed after the send (seed article 000, second trap, in the database)",
		Side:        "client",
		Client:      func(cfg *client.Config) { cfg.Planted.KeyAfterSend = true },
		ClientStore: "postgres",
	})
	register(Mutant{
		Name:        "pg-unconditional-settle",
		Description: "reconciliation's abandon is an UPDATE without \"AND status = 'Open'\": when the shopper's resend on another instance settles the attempt between the reconciler's read and its write, the reconciler overwrites it",
		Invariant:   "books-balance", MinSteps: 3,
		Consequence: "at-most-one-charge-per-order",
		Class:       "unconditional update under several instances (seed article 000's warning)",
		Side:        "client",
		Client:      func(cfg *client.Config) { cfg.Planted.UnconditionalSettle = true },
		ClientStore: "postgres",
		Instances:   2,
	})
}
