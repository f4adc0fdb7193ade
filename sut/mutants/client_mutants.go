package mutants

import (
	"net/http"
	"sync"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/client"
	"github.com/idemcheck/idemcheck/sut/provider"
)

// The client mutants: the traps of seed article 000 ("Sık Düşülen
// Tuzaklar") and their relatives. MinSteps counts shopper steps, the fault
// schedule aside.
func init() {
	register(Mutant{
		Name:        "fresh-key-per-request",
		Description: "an HTTP middleware puts a new Idempotency-Key on every request, so retries are never deduplicated",
		Invariant:   "one-key-per-intent", MinSteps: 2,
		Class: "key generated per HTTP request (seed article 000, first trap)",
		Client: func(cfg *client.Config) {
			newKey := cfg.NewKey
			cfg.WrapTransport = func(next http.RoundTripper) http.RoundTripper {
				return rewriteKey{next: next, newKey: newKey, when: func(*http.Request) bool { return true }}
			}
		},
	})
	register(Mutant{
		Name:        "unquoted-key",
		Description: "the key is sent as a bare token, not as a Structured Field String",
		Invariant:   "key-format", MinSteps: 2,
		Class: "header not in the draft's format (draft §2: the value is an sf-string)",
		Client: func(cfg *client.Config) {
			cfg.WrapTransport = func(next http.RoundTripper) http.RoundTripper { return unquote{next: next} }
		},
	})
	register(Mutant{
		Name:        "key-per-order",
		Description: "one key per order, reused for a second card or amount after a decline or an abandon",
		Invariant:   "one-key-per-intent", MinSteps: 2,
		LocalMinimum: "a double click of the declined card (2 steps: the later click starts a new intent under the order's key) is minimal; " +
			"a checkout declined, then another checkout, or a crash mid-checkout, then the pay-again step (3 steps) is the shape the seeds find first, and the shrinker cannot turn two steps into one double click " +
			"(since the draws of issue 28, no matrix seed reaches 2 steps: TestKeyPerOrder_MinimumIsADoubleClick shows them, drawing only double clicks)",
		Class:  "key scoped to the order instead of the payment intent",
		Client: func(cfg *client.Config) { cfg.Planted.KeyPerOrder = true },
	})
	register(Mutant{
		Name:        "key-after-send",
		Description: "the key is kept in memory while the request is out and stored after the response; a crash loses it and the restart resends the intent under a new key",
		Invariant:   "one-key-per-intent", MinSteps: 2,
		Class:  "key not stored before the first send (seed article 000, second trap)",
		Client: func(cfg *client.Config) { cfg.Planted.KeyAfterSend = true },
	})
	register(Mutant{
		Name:        "caller-key-dropped",
		Description: "on a retry the HTTP layer replaces the caller's Idempotency-Key with one it generates",
		Invariant:   "one-key-per-intent", MinSteps: 2,
		Class: "SDK retry that loses the caller's header",
		Client: func(cfg *client.Config) {
			newKey := cfg.NewKey
			seen := &triesSeen{n: map[triesKey]int{}}
			cfg.WrapTransport = func(next http.RoundTripper) http.RoundTripper {
				return rewriteKey{next: next, newKey: newKey, when: seen.retry}
			}
		},
	})
	register(Mutant{
		Name:        "conflict-is-failure",
		Description: "a 409 is read as a final failure: the order goes back to unpaid and the shopper may pay again under a new intent",
		Invariant:   "409-never-final", MinSteps: 2,
		Class:  "409 counted as failure (seed article 000, third trap)",
		Client: func(cfg *client.Config) { cfg.Planted.ConflictIsFailure = true },
	})
	register(Mutant{
		Name:        "conflict-is-success",
		Description: "a 409 is read as paid",
		Invariant:   "409-never-final", MinSteps: 2,
		Class:  "409 counted as success (seed article 000, third trap)",
		Client: func(cfg *client.Config) { cfg.Planted.ConflictIsSuccess = true },
	})
	register(Mutant{
		Name:        "retry-without-key",
		Description: "POSTs carry no key and are still retried on timeouts and 5xx, against a provider that (like many) does not require the key; the missing key is caught before the retry charges twice",
		Invariant:   "key-format", MinSteps: 2,
		Class:    "unsafe-method retry (RFC 9110 §9.2.2; the resilience default the seed article turns off)",
		Side:     "client",
		Client:   func(cfg *client.Config) { cfg.Planted.RetryWithoutKey = true },
		Provider: func(cfg *provider.Config) { cfg.KeyOptional = true },
	})
	register(Mutant{
		Name:        "retry-contract-violation",
		Description: "400 and 422 are retried like transient errors",
		Invariant:   "no-unsafe-retry", MinSteps: 2,
		Class:  "retrying a contract violation (draft §2.6)",
		Client: func(cfg *client.Config) { cfg.Planted.RetryContractViolation = true },
	})
	register(Mutant{
		Name:        "unknown-shown-as-failure",
		Description: "an unknown outcome is answered as \"payment failed\" and the card-change guard is off, so the shopper pays again with another card while the first charge may land",
		Invariant:   "409-never-final", MinSteps: 2,
		Class:  "unknown outcome shown as failure (seed article 000, fourth trap)",
		Client: func(cfg *client.Config) { cfg.Planted.UnknownShownAsFailure = true },
	})
	register(Mutant{
		Name:        "two-paths-two-keys",
		Description: "a payment-ready callback racing the shopper's return charges the order under its own key",
		Invariant:   "at-most-one-charge-per-order", MinSteps: 2,
		Class:  "two code paths, two keys for one payment",
		Client: func(cfg *client.Config) { cfg.Planted.CallbackOwnKey = true },
	})
	register(Mutant{
		Name:        "reconciler-never-abandons",
		Description: "reconciliation leaves attempts without a charge open forever",
		Invariant:   "reconciliation-converges", MinSteps: 2,
		Class:  "reconciliation that never gives up (orders stuck in PaymentPending)",
		Client: func(cfg *client.Config) { cfg.Planted.ReconcilerNeverAbandons = true },
	})
	register(Mutant{
		Name:        "reconciler-abandons-charged",
		Description: "reconciliation abandons old attempts without looking at the charges it found",
		Invariant:   "books-balance", MinSteps: 2,
		Class:  "reconciliation that ignores the provider's truth (a paid order shown unpaid)",
		Client: func(cfg *client.Config) { cfg.Planted.ReconcilerAbandonsCharged = true },
	})
}

// rewriteKey sets a freshly generated key on the requests when selects.
type rewriteKey struct {
	next   http.RoundTripper
	newKey func() string
	when   func(*http.Request) bool
}

func (f rewriteKey) RoundTrip(req *http.Request) (*http.Response, error) {
	if !f.when(req) {
		return f.next.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	r.Header.Set(models.IdempotencyKeyHeader, models.FormatKey(f.newKey()))
	return f.next.RoundTrip(r)
}

// unquote sends the Idempotency-Key as the bare token.
type unquote struct{ next http.RoundTripper }

func (u unquote) RoundTrip(req *http.Request) (*http.Response, error) {
	key, _, ok := models.ParseKey(req.Header.Get(models.IdempotencyKeyHeader))
	if !ok {
		return u.next.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	r.Header.Set(models.IdempotencyKeyHeader, key)
	return u.next.RoundTrip(r)
}

type triesKey struct {
	op     int
	method string
}

// triesSeen counts the tries of each client call (by the operation id in
// the request context); safe for concurrent use.
type triesSeen struct {
	mu sync.Mutex // guards n
	n  map[triesKey]int
}

// retry reports whether req is a second or later try of its call.
func (s *triesSeen) retry(req *http.Request) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := triesKey{models.OpFrom(req.Context()), req.Method}
	s.n[k]++
	return req.Method == http.MethodPost && s.n[k] > 1
}
