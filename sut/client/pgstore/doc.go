// Package pgstore keeps the reference client's orders and payment attempts
// in PostgreSQL through pgx v5: a client.AttemptStore as seed article 000
// describes the real one ("Gerçek uygulamada PaymentAttempts bir tablo ve
// attempt kaydı, siparişin PaymentPending durumuna geçişiyle aynı
// transaction'da yazılıyor").
//
//   - The attempt, with its idempotency key, and the order's move to
//     PaymentPending are one transaction, committed before the first send.
//   - Reconciliation's abandon is one conditional UPDATE (… WHERE status =
//     'Open' AND last_sent_at <= $idle), so two reconcilers, or a reconciler
//     and a shopper resending the key, cannot settle one attempt twice.
//   - Every write transaction first reads its instance's epoch FOR SHARE
//     from client_instances and commits nothing when it is stale: a crashed
//     client's late writes are dropped (client.ErrFenced), in SQL.
//   - Every transaction locks the order row first (SELECT … FOR UPDATE), so
//     concurrent checkouts of one order on several instances serialize and
//     no two transactions take the same rows in opposite orders.
//   - The schema is created and migrated from Go at Open (migrate.go); each
//     Store lives in its own PostgreSQL schema (search_path), so checks
//     never see each other's rows, and Drop removes it.
//
// Times are stored as bigint Unix nanoseconds of the client's clock (the
// harness's virtual clock is not the server's), NULL for a zero time.
//
// Index: doc.go; store.go — Store, Open, Drop and the AttemptStore methods;
// migrate.go — the migrations; env.go — IDEMCHECK_POSTGRES_URL and schema
// names.
package pgstore
