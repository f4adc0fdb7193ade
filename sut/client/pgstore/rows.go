package pgstore

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/client"
)

// querier is a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

const orderColumns = `id, total, currency, status, provider_charge_id`

const attemptColumns = `id, order_id, idempotency_key, amount, currency, card_token_hash,
	created_at, last_sent_at, last_checked_at, status, provider_charge_id`

func scanOrder(row pgx.CollectableRow) (models.Order, error) {
	var o models.Order
	var status string
	err := row.Scan(&o.ID, &o.Total, &o.Currency, &status, &o.ProviderChargeID)
	o.Status = models.OrderStatus(status)
	return o, err
}

// loadOrder reads order id; lock is "" or " FOR UPDATE".
func loadOrder(ctx context.Context, q querier, id int64, lock string) (models.Order, error) {
	rows, err := q.Query(ctx, `SELECT `+orderColumns+` FROM orders WHERE id = $1`+lock, id)
	if err != nil {
		return models.Order{}, err
	}
	o, err := pgx.CollectExactlyOneRow(rows, scanOrder)
	if errors.Is(err, pgx.ErrNoRows) {
		return models.Order{}, client.ErrUnknownOrder
	}
	return o, err
}

func queryAttempts(ctx context.Context, q querier, sql string, args ...any) ([]models.PaymentAttempt, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (models.PaymentAttempt, error) {
		var a models.PaymentAttempt
		var created, sent int64
		var checked *int64
		var status string
		err := row.Scan(&a.ID, &a.OrderID, &a.IdempotencyKey, &a.Amount, &a.Currency, &a.CardTokenHash,
			&created, &sent, &checked, &status, &a.ProviderChargeID)
		a.CreatedAt, a.LastSentAt, a.Status = fromNS(created), fromNS(sent), models.AttemptStatus(status)
		if checked != nil {
			a.LastCheckedAt = fromNS(*checked)
		}
		return a, err
	})
}

// ns is t in Unix nanoseconds (the columns' unit).
func ns(t time.Time) int64 { return t.UnixNano() }

func fromNS(n int64) time.Time { return time.Unix(0, n) }
