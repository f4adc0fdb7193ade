// Package client is idemcheck's reference client: the checkout service,
// payment attempt store, provider gateway, resilience pipeline and
// reconciliation job of seed article 000 ("Idempotent Dış Çağrılar:
// Idempotency-Key Göndermek, Bilinmeyen Sonuç ve Reconciliation"),
// written in Go over failsafe-go.
//
// One payment intent (one order, one amount, one card) is one
// models.PaymentAttempt with one idempotency key, stored — and the order
// moved to PaymentPending — before the first request leaves. Every try of
// every call for the intent sends that key as a Structured Field String. A
// timeout, a transport error, a 409 or a 500/502/504 is an unknown outcome:
// the attempt stays Open, the shopper gets 202 PaymentPending, and the
// outcome is settled by the shopper retrying with the same card (same key)
// or by the reconciliation job (GET /v1/charges?merchant_reference=).
//
// Index:
//   - config.go    — Config and BreakerConfig, with their defaults.
//   - attemptstore.go — AttemptStore, the store's interface (a PostgreSQL
//     one is sut/client/pgstore; sut/client/storetest is the contract both
//     keep), Epoch, StartSpec, the store errors.
//   - store.go     — Store: orders and attempts in memory, GetOrStart, and
//     the epochs (one per Config.Instance) that fence writes from a
//     crashed client.
//   - points.go    — the crash points Config.At is called at.
//   - pipeline.go  — the failsafe-go pipeline (total timeout → retry →
//     circuit breaker → attempt timeout) and ShouldRetry.
//   - gateway.go   — the provider adapter: the charge request, the status
//     mapping, and the charge search.
//   - checkout.go  — Client, New, OpenOrder, Checkout, PaymentReady (the
//     callback path), Crash; Outcome and CheckoutResult.
//   - reconcile.go — ReconciliationJob: RunOnce and the Run loop.
//   - stalekey.go  — a checkout never resends a key older than
//     KeyRetention − StaleKeyMargin: it reconciles the attempt first, and
//     answers PaymentPending (ErrStaleKey) when that cannot settle it.
//   - planted.go   — Planted: the deliberate bugs sut/mutants switches on
//     (each branch marked "planted bug: <field>"); off in the zero Config.
//
// Nothing here logs; card tokens and the API key never appear in an error.
package client
