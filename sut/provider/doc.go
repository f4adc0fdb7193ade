// Package provider is the embedded reference payment provider: an
// http.Handler that implements docs/provider-api.md exactly, with
// no network, no logging and an injectable clock.
//
// Idempotency follows draft-ietf-httpapi-idempotency-key-header §2: every
// POST /v1/charges carries an Idempotency-Key (a Structured Field String,
// or the bare token; both name the same key). The provider remembers each
// key with the fingerprint of its request (models.Fingerprint) and answers
//
//   - 422 when the key is reused with another request body,
//   - 409 while the first request under the key is still being processed
//     (the in-flight lock of seed article 004),
//   - the first response's status and exact body bytes, with
//     Idempotent-Replayed: true, once it has completed (seed article 004:
//     store the full response, not a flag) — declines included,
//
// for the retention window (24h unless configured), after which the key is
// forgotten and may create a new charge. Keys are scoped per account (the
// Authorization credential, AccountScope; draft §5) and by resource, not by
// the raw URL: /v1/charges/ is /v1/charges and a POST's query is ignored.
// The fingerprint is over the payload's content, so the same fields in
// another order are the same body (draft §2.4).
//
// Index:
//   - provider.go — Config, New, Provider, routing and Charges.
//   - create.go   — POST /v1/charges: validation, the key store, processing;
//     requestKey and answer serve both endpoints.
//   - find.go     — GET /v1/charges?merchant_reference=, per account.
//   - refund.go   — POST and GET /v1/refunds: keys of their own, the
//     refunds per account, in memory and over a Store.
//   - write.go    — JSON and problem-details (RFC 9457) responses.
//   - scope.go    — the account and resource a key is scoped by, the
//     fingerprint, charges per account.
//   - store.go    — Store: a durable key store and ledger instead of memory
//     (Config.Store; redisstore is seed article 004's Redis store).
//   - planted.go  — Planted: deliberate, switchable bugs for sut/mutants;
//     the zero value (the default) is the reference provider;
//     planted_shapes.go holds the request-shape and account bugs.
package provider
