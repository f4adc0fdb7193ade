// Package models holds idemcheck's domain types, the recorded history of one
// run, and the executable specification of an idempotent provider.
//
// Index:
//   - order.go    — Order and its status (Placed / PaymentPending / Paid).
//   - attempt.go  — PaymentAttempt, one payment intent, and its Reference.
//   - charge.go   — the wire types of docs/provider-api.md: ChargeRequest, Charge,
//     the request Fingerprint and the Idempotency-Key header codec.
//   - history.go  — History: every shopper operation and wire exchange of a
//     run, with its (virtual) time.
//   - spec.go     — Spec, the provider's idempotency contract as a pure step
//     function (key → in-flight / completed(status, body) / expired), used as
//     an oracle by the invariants.
//
// Nothing in this package does I/O or knows about rapid.
package models
