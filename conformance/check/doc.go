// Package check holds idemcheck's invariants: pure functions over package
// models (no rapid, no I/O, no backends) that judge a World — the wire
// history so far, the client's durable state and the provider's truth at
// one moment — and name the first broken promise as a Finding with a
// deterministic message and category.
//
// Safety lists the invariants judged after every step, Liveness those
// judged once the faults heal; each Invariant's Doc says what it promises
// and its check function's comment gives the source (the IETF
// draft-ietf-httpapi-idempotency-key-header, the seed articles,
// docs/provider-api.md). Evaluate is the whole-history verdict. The property,
// the provider certification and the client certification of package
// conformance all read their verdicts from here.
package check
