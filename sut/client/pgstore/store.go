package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/client"
)

// Store is a client.AttemptStore in one PostgreSQL schema. It is safe for
// concurrent use (a pgxpool.Pool of at most MaxConns connections).
type Store struct {
	pool   *pgxpool.Pool
	schema string
}

var _ client.AttemptStore = (*Store)(nil)

// MaxConns bounds each Store's connection pool: two transactions at once
// (so row locks are in play), small on a shared machine where each new
// PostgreSQL connection costs a process.
const MaxConns = 2

// The server-side bounds every connection sets, in the server's own (real)
// time, so a query is bounded even where the client's clock is virtual.
const (
	statementTimeout = "10s"
	lockTimeout      = "10s"
)

// Open connects to the database at url (see URLFromEnv), creates schema if
// it does not exist and migrates it, and returns a Store whose every query
// runs in it. A database that does not answer is an error naming
// IDEMCHECK_POSTGRES_URL. Close the Store when done; Drop also removes the
// schema. Inside a testing/synctest bubble, Open, Close and Drop must be
// called in the same bubble (the pool's goroutines belong to it).
func Open(ctx context.Context, url, schema string) (*Store, error) {
	s, err := Connect(ctx, url, schema)
	if err != nil {
		return nil, err
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		s.pool.Close()
		return nil, unreachable(url, err)
	}
	err = migrate(ctx, conn.Conn(), schema)
	conn.Release()
	if err != nil {
		s.pool.Close()
		return nil, fmt.Errorf("pgstore: migrate schema %s: %w", schema, err)
	}
	return s, nil
}

// Connect is Open for a schema an earlier Open made and migrated: it
// neither creates nor migrates it (a harness opens one schema per run and
// a Store per sequence in it; see Reset). Connections are made when first
// needed, so an unreachable database shows at the first call.
func Connect(ctx context.Context, url, schema string) (*Store, error) {
	if !schemaName.MatchString(schema) {
		return nil, fmt.Errorf("pgstore: schema name %q is not [a-z_][a-z0-9_]*", schema)
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %s=%s is not a PostgreSQL URL: %w", EnvURL, redacted(url), err)
	}
	cfg.MaxConns = MaxConns
	// The harness's clock may be virtual and jump by hours: keep the
	// connections rather than recycle them at every jump.
	cfg.MaxConnIdleTime, cfg.MaxConnLifetime, cfg.HealthCheckPeriod = 72*time.Hour, 72*time.Hour, 72*time.Hour
	rp := cfg.ConnConfig.RuntimeParams
	rp["search_path"] = schema
	rp["statement_timeout"] = statementTimeout
	rp["lock_timeout"] = lockTimeout
	rp["application_name"] = "idemcheck-pgstore"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, unreachable(url, err)
	}
	return &Store{pool: pool, schema: schema}, nil
}

func unreachable(url string, err error) error {
	return fmt.Errorf("pgstore: PostgreSQL at %s does not answer (set %s; default %s): %w", redacted(url), EnvURL, DefaultURL, err)
}

// Schema is the store's schema name.
func (s *Store) Schema() string { return s.schema }

// Close closes the pool; the schema stays.
func (s *Store) Close() { s.pool.Close() }

// Drop removes the store's schema with every row in it, then closes the pool.
func (s *Store) Drop(ctx context.Context) error {
	defer s.pool.Close()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL synchronous_commit TO off`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DROP SCHEMA IF EXISTS `+s.schema+` CASCADE`)
		return err
	})
	if err != nil {
		return fmt.Errorf("pgstore: drop schema %s: %w", s.schema, err)
	}
	return nil
}

// Reset empties the store's tables and restarts its ids (orders from 1),
// for a new sequence in a schema opened before; no client may be using the
// store meanwhile. DELETE and setval, not TRUNCATE: on a few rows they
// cost a round trip, TRUNCATE a new file per table.
func (s *Store) Reset(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, `BEGIN; SET LOCAL synchronous_commit TO off;
		DELETE FROM payment_attempts; DELETE FROM orders; DELETE FROM client_instances;
		SELECT setval(pg_get_serial_sequence('orders', 'id'), 1, false);
		SELECT setval(pg_get_serial_sequence('payment_attempts', 'seq'), 1, false);
		COMMIT`)
	return err
}

// Open implements client.AttemptStore.
func (s *Store) Open(ctx context.Context, instance string) (client.Epoch, error) {
	var n int64
	err := s.pool.QueryRow(ctx, `INSERT INTO client_instances (instance, epoch) VALUES ($1, 1)
		ON CONFLICT (instance) DO UPDATE SET epoch = client_instances.epoch + 1 RETURNING epoch`, instance).Scan(&n)
	if err != nil {
		return client.Epoch{}, fmt.Errorf("pgstore: open: %w", err)
	}
	return client.Epoch{Instance: instance, N: uint64(n)}, nil
}

// Fence implements client.AttemptStore.
func (s *Store) Fence(ctx context.Context, e client.Epoch) error {
	_, err := s.pool.Exec(ctx, `UPDATE client_instances SET epoch = epoch + 1 WHERE instance = $1 AND epoch = $2`,
		e.Instance, int64(e.N))
	return err
}

// write runs fn in one transaction of epoch e: it reads the instance's
// epoch FOR SHARE first (so a Fence waits for the transaction, and the
// transaction sees any Fence committed before it) and commits nothing when
// e is stale. An error from fn rolls the transaction back.
func (s *Store) write(ctx context.Context, e client.Epoch, fn func(pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var cur int64
		err := tx.QueryRow(ctx, `SELECT epoch FROM client_instances WHERE instance = $1 FOR SHARE`, e.Instance).Scan(&cur)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return client.ErrFenced
		case err != nil:
			return err
		case uint64(cur) != e.N:
			return client.ErrFenced
		}
		return fn(tx)
	})
}

// OpenOrder implements client.AttemptStore.
func (s *Store) OpenOrder(ctx context.Context, e client.Epoch, total int64, currency string) (models.Order, error) {
	o := models.Order{Total: total, Currency: currency, Status: models.OrderPlaced}
	err := s.write(ctx, e, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `INSERT INTO orders (total, currency, status) VALUES ($1, $2, $3) RETURNING id`,
			total, currency, string(o.Status)).Scan(&o.ID)
	})
	if err != nil {
		return models.Order{}, err
	}
	return o, nil
}

// LoadOrder implements client.AttemptStore.
func (s *Store) LoadOrder(ctx context.Context, id int64) (models.Order, error) {
	return loadOrder(ctx, s.pool, id, "")
}

// GetOrStart implements client.AttemptStore: one transaction that locks
// the order row, looks for its open attempt, and either touches it (a
// resend) or inserts a new one with its key and moves the order to
// PaymentPending.
func (s *Store) GetOrStart(ctx context.Context, e client.Epoch, sp client.StartSpec) (client.Started, error) {
	var st client.Started
	err := s.write(ctx, e, func(tx pgx.Tx) error {
		o, err := loadOrder(ctx, tx, sp.OrderID, " FOR UPDATE")
		if err != nil {
			return err
		}
		st.Order = o
		if o.Status == models.OrderPaid {
			return client.ErrAlreadyPaid
		}
		open, found, err := s.openAttempt(ctx, tx, o, sp)
		if err != nil {
			return err
		}
		if found {
			if open.Amount != o.Total || open.Currency != o.Currency || open.CardTokenHash != sp.CardHash {
				return client.ErrAttemptConflict
			}
			open.LastSentAt = sp.Now // about to resend: reconciliation must wait again
			st.Attempt, st.Reused = open, true
			_, err = tx.Exec(ctx, `UPDATE payment_attempts SET last_sent_at = $2 WHERE id = $1`, open.ID, ns(sp.Now))
			return err
		}
		a := models.PaymentAttempt{
			ID: sp.NewID(), OrderID: o.ID, IdempotencyKey: sp.NewKey(), Amount: o.Total, Currency: o.Currency,
			CardTokenHash: sp.CardHash, CreatedAt: sp.Now, LastSentAt: sp.Now, Status: models.AttemptOpen,
		}
		if _, err := tx.Exec(ctx, `INSERT INTO payment_attempts
			(id, order_id, idempotency_key, amount, currency, card_token_hash, created_at, last_sent_at, status)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			a.ID, a.OrderID, a.IdempotencyKey, a.Amount, a.Currency, a.CardTokenHash, ns(a.CreatedAt), ns(a.LastSentAt), string(a.Status)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE orders SET status = $2 WHERE id = $1`, o.ID, string(models.OrderPaymentPending)); err != nil {
			return err
		}
		st.Attempt = a
		st.Order.Status = models.OrderPaymentPending
		return nil
	})
	if err != nil && !errors.Is(err, client.ErrAlreadyPaid) && !errors.Is(err, client.ErrAttemptConflict) {
		st.Order = models.Order{}
	}
	return st, err
}

// openAttempt is the order's open attempt GetOrStart considers: the first
// Open one; under the planted bugs none (IgnoreOpen) or only one with the
// same card and amount (NoCardGuard).
func (s *Store) openAttempt(ctx context.Context, tx pgx.Tx, o models.Order, sp client.StartSpec) (models.PaymentAttempt, bool, error) {
	if sp.IgnoreOpen { // planted bug: CallbackOwnKey
		return models.PaymentAttempt{}, false, nil
	}
	q := `SELECT ` + attemptColumns + ` FROM payment_attempts WHERE order_id = $1 AND status = 'Open'`
	args := []any{o.ID}
	if sp.NoCardGuard { // planted bug: UnknownShownAsFailure
		q += ` AND amount = $2 AND currency = $3 AND card_token_hash = $4`
		args = append(args, o.Total, o.Currency, sp.CardHash)
	}
	atts, err := queryAttempts(ctx, tx, q+` ORDER BY seq LIMIT 1`, args...)
	if err != nil || len(atts) == 0 {
		return models.PaymentAttempt{}, false, err
	}
	return atts[0], true, nil
}

// lockAttempt locks the order row of attempt id (orders before attempts,
// in every transaction) and returns the order id.
func lockAttempt(ctx context.Context, tx pgx.Tx, id uuid.UUID) (int64, error) {
	var orderID int64
	err := tx.QueryRow(ctx, `SELECT o.id FROM orders o JOIN payment_attempts a ON a.order_id = o.id
		WHERE a.id = $1 FOR UPDATE OF o`, id).Scan(&orderID)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, client.ErrUnknownOrder
	}
	return orderID, err
}

// Succeed implements client.AttemptStore.
func (s *Store) Succeed(ctx context.Context, e client.Epoch, id uuid.UUID, chargeID string) (models.Order, error) {
	var o models.Order
	err := s.write(ctx, e, func(tx pgx.Tx) error {
		orderID, err := lockAttempt(ctx, tx, id)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE payment_attempts SET status = 'Succeeded', provider_charge_id = $2 WHERE id = $1`, id, chargeID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE orders SET status = 'Paid', provider_charge_id = $2 WHERE id = $1 AND status <> 'Paid'`, orderID, chargeID); err != nil {
			return err
		}
		o, err = loadOrder(ctx, tx, orderID, "")
		return err
	})
	return o, err
}

// EndAttempt implements client.AttemptStore.
func (s *Store) EndAttempt(ctx context.Context, e client.Epoch, id uuid.UUID, status models.AttemptStatus) (models.Order, error) {
	var o models.Order
	err := s.write(ctx, e, func(tx pgx.Tx) error {
		orderID, err := lockAttempt(ctx, tx, id)
		if err != nil {
			return err
		}
		if _, err := closeAttempt(ctx, tx, id, orderID, status, `AND status = 'Open'`); err != nil {
			return err
		}
		o, err = loadOrder(ctx, tx, orderID, "")
		return err
	})
	return o, err
}

// Abandon implements client.AttemptStore: the UPDATE is conditional on the
// attempt being Open and unsent since a.IdleSince, re-checked by the
// server on the locked row.
func (s *Store) Abandon(ctx context.Context, e client.Epoch, a client.AbandonSpec) (abandoned bool, err error) {
	err = s.write(ctx, e, func(tx pgx.Tx) error {
		orderID, err := lockAttempt(ctx, tx, a.ID)
		if err != nil {
			return err
		}
		cond, args := `AND status = 'Open' AND last_sent_at <= $3`, []any{ns(a.IdleSince)}
		if a.Unconditional { // planted bug: UnconditionalSettle
			cond, args = "", nil
		}
		abandoned, err = closeAttempt(ctx, tx, a.ID, orderID, models.AttemptAbandoned, cond, args...)
		return err
	})
	return abandoned, err
}

// closeAttempt sets attempt id's status where cond (over $3...: args) holds and, when it did,
// puts its order back to Placed if it is PaymentPending.
func closeAttempt(ctx context.Context, tx pgx.Tx, id uuid.UUID, orderID int64, status models.AttemptStatus, cond string, args ...any) (bool, error) {
	tag, err := tx.Exec(ctx, `UPDATE payment_attempts SET status = $2 WHERE id = $1 `+cond, append([]any{id, string(status)}, args...)...)
	if err != nil || tag.RowsAffected() == 0 {
		return false, err
	}
	_, err = tx.Exec(ctx, `UPDATE orders SET status = 'Placed' WHERE id = $1 AND status = 'PaymentPending'`, orderID)
	return err == nil, err
}

// MarkChecked implements client.AttemptStore.
func (s *Store) MarkChecked(ctx context.Context, e client.Epoch, id uuid.UUID, now time.Time) error {
	return s.write(ctx, e, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE payment_attempts SET last_checked_at = $2 WHERE id = $1`, id, ns(now))
		return err
	})
}

// OpenAttempts implements client.AttemptStore.
func (s *Store) OpenAttempts(ctx context.Context, cutoff time.Time) ([]models.PaymentAttempt, error) {
	return queryAttempts(ctx, s.pool, `SELECT `+attemptColumns+` FROM payment_attempts
		WHERE status = 'Open' AND created_at <= $1 ORDER BY seq`, ns(cutoff))
}

// SetKey implements client.AttemptStore.
func (s *Store) SetKey(ctx context.Context, e client.Epoch, id uuid.UUID, key string) error {
	return s.write(ctx, e, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE payment_attempts SET idempotency_key = $2 WHERE id = $1 AND idempotency_key = ''`, id, key)
		return err
	})
}

// Snapshot implements client.AttemptStore: both reads in one REPEATABLE
// READ transaction, so they see one instant.
func (s *Store) Snapshot(ctx context.Context) (orders []models.Order, atts []models.PaymentAttempt, err error) {
	err = pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT `+orderColumns+` FROM orders ORDER BY id`)
		if err != nil {
			return err
		}
		orders, err = pgx.CollectRows(rows, scanOrder)
		if err != nil {
			return err
		}
		atts, err = queryAttempts(ctx, tx, `SELECT `+attemptColumns+` FROM payment_attempts ORDER BY seq`)
		return err
	})
	return orders, atts, err
}
