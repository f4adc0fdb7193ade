package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// migrations are the schema's versions, applied in order by migrate; a
// migration once released is never edited (add one instead).
var migrations = []string{
	// 1: the client's tables.
	`CREATE TABLE client_instances (
		instance text PRIMARY KEY,
		epoch    bigint NOT NULL
	);
	CREATE TABLE orders (
		id                 bigserial PRIMARY KEY,
		total              bigint NOT NULL,
		currency           text   NOT NULL,
		status             text   NOT NULL,
		provider_charge_id text   NOT NULL DEFAULT ''
	);
	CREATE TABLE payment_attempts (
		seq                bigserial PRIMARY KEY,
		id                 uuid   NOT NULL UNIQUE,
		order_id           bigint NOT NULL REFERENCES orders (id),
		idempotency_key    text   NOT NULL,
		amount             bigint NOT NULL,
		currency           text   NOT NULL,
		card_token_hash    text   NOT NULL,
		created_at         bigint NOT NULL,
		last_sent_at       bigint NOT NULL,
		last_checked_at    bigint,
		status             text   NOT NULL,
		provider_charge_id text   NOT NULL DEFAULT ''
	);
	CREATE INDEX payment_attempts_open ON payment_attempts (order_id) WHERE status = 'Open';`,
}

// migrate creates schema if needed and applies the migrations it lacks,
// under a transaction-scoped advisory lock, so that two processes opening
// one schema at once migrate it once.
func migrate(ctx context.Context, conn *pgx.Conn, schema string) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	// Schema changes need not wait for the WAL flush: a schema lost with the
	// server is made again at the next Open (the store's own writes keep the
	// server's setting).
	if _, err := tx.Exec(ctx, `SET LOCAL synchronous_commit TO off`); err != nil {
		return err
	}
	steps := []string{
		`SELECT pg_advisory_xact_lock(hashtext('idemcheck-pgstore:' || $1))`,
		`CREATE SCHEMA IF NOT EXISTS ` + schema,
		`CREATE TABLE IF NOT EXISTS ` + schema + `.schema_migrations (version int PRIMARY KEY)`,
	}
	if _, err := tx.Exec(ctx, steps[0], schema); err != nil {
		return err
	}
	for _, q := range steps[1:] {
		if _, err := tx.Exec(ctx, q); err != nil {
			return err
		}
	}
	var have int
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM `+schema+`.schema_migrations`).Scan(&have); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `SET LOCAL search_path TO `+schema); err != nil {
		return err
	}
	for v := have + 1; v <= len(migrations); v++ {
		if _, err := tx.Exec(ctx, migrations[v-1]); err != nil {
			return fmt.Errorf("migration %d: %w", v, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version) VALUES ($1)`, v); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}
