package client

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/idemcheck/idemcheck/models"
)

// copyOfStore is a reader's own copy of a Store, kept by ChangesFrom the
// way the harness keeps it after every step.
type copyOfStore struct {
	pos      int
	orders   []models.Order
	orderAt  map[int64]int
	attempts []models.PaymentAttempt
	intents  []models.RefundIntent
}

func (c *copyOfStore) follow(t *rapid.T, s *Store) {
	ch, next := s.ChangesFrom(c.pos)
	if c.pos == 0 {
		*c = copyOfStore{orderAt: map[int64]int{}, orders: []models.Order{}, attempts: []models.PaymentAttempt{}, intents: []models.RefundIntent{}}
	}
	c.pos = next
	for _, o := range ch.Orders {
		if i, ok := c.orderAt[o.ID]; ok {
			c.orders[i] = o
			continue
		}
		if n := len(c.orders); n > 0 && c.orders[n-1].ID > o.ID {
			t.Fatalf("new order %d after order %d", o.ID, c.orders[n-1].ID)
		}
		c.orderAt[o.ID] = len(c.orders)
		c.orders = append(c.orders, o)
	}
	for k, i := range ch.AttemptAt {
		if i == len(c.attempts) {
			c.attempts = append(c.attempts, ch.Attempts[k])
		} else {
			c.attempts[i] = ch.Attempts[k]
		}
	}
	for k, i := range ch.IntentAt {
		if i == len(c.intents) {
			c.intents = append(c.intents, ch.Intents[k])
		} else {
			c.intents[i] = ch.Intents[k]
		}
	}
}

// A reader that keeps its copy of the in-memory Store from ChangesFrom
// alone holds exactly what Snapshot and Refunds read, after every one of
// a random run of the store's changes (every changing method, fenced
// epochs included), whether it reads after each change or skips some.
func TestStoreChangesFromKeepAFullCopy(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ctx := context.Background()
		s := NewStore()
		e, _ := s.Open(ctx, "p1")
		now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
		var c copyOfStore
		n := 0
		newID := func() uuid.UUID { n++; return uuid.NewSHA1(uuid.Nil, []byte(fmt.Sprint(n))) }
		newKey := func() string { n++; return fmt.Sprint("k", n) }
		pickAttempt := func(t *rapid.T) uuid.UUID {
			_, atts, _ := s.Snapshot(ctx)
			if len(atts) == 0 {
				return uuid.Nil
			}
			return rapid.SampledFrom(atts).Draw(t, "attempt").ID
		}
		pickIntent := func(t *rapid.T) uuid.UUID {
			rs, _ := s.Refunds(ctx)
			if len(rs) == 0 {
				return uuid.Nil
			}
			return rapid.SampledFrom(rs).Draw(t, "intent").ID
		}
		order := func(t *rapid.T) int64 { return rapid.Int64Range(1, 4).Draw(t, "order") }
		t.Repeat(map[string]func(*rapid.T){
			"open order": func(t *rapid.T) { s.OpenOrder(ctx, e, rapid.Int64Range(1, 3).Draw(t, "total"), "TRY") },
			"start": func(t *rapid.T) {
				s.GetOrStart(ctx, e, StartSpec{OrderID: order(t), CardHash: rapid.SampledFrom([]string{"a", "b"}).Draw(t, "card"), Now: now, NewID: newID, NewKey: newKey,
					IgnoreOpen: rapid.Bool().Draw(t, "ignore open")})
			},
			"succeed": func(t *rapid.T) { s.Succeed(ctx, e, pickAttempt(t), "ch_1") },
			"abandon": func(t *rapid.T) {
				s.Abandon(ctx, e, AbandonSpec{ID: pickAttempt(t), IdleSince: now, Unconditional: rapid.Bool().Draw(t, "unconditional")})
			},
			"end":     func(t *rapid.T) { s.EndAttempt(ctx, e, pickAttempt(t), models.AttemptDeclined) },
			"checked": func(t *rapid.T) { s.MarkChecked(ctx, e, pickAttempt(t), now.Add(time.Minute)) },
			"set key": func(t *rapid.T) { s.SetKey(ctx, e, pickAttempt(t), "late") },
			"refund": func(t *rapid.T) {
				s.StartRefund(ctx, e, RefundSpec{OrderID: order(t), Charge: "ch_1", Amount: 1, Now: now, NewID: newID, NewKey: newKey})
			},
			"settle":    func(t *rapid.T) { s.SettleRefund(ctx, e, pickIntent(t), models.RefundSucceeded, "re_1") },
			"give up":   func(t *rapid.T) { s.AbandonRefund(ctx, e, pickIntent(t), now) },
			"restart":   func(t *rapid.T) { s.Fence(ctx, e); e, _ = s.Open(ctx, "p1") },
			"time":      func(t *rapid.T) { now = now.Add(time.Minute) },
			"skip read": func(t *rapid.T) {},
			"": func(t *rapid.T) {
				c.follow(t, s)
				orders, atts, _ := s.Snapshot(ctx)
				rs, _ := s.Refunds(ctx)
				require.Equal(t, slices.Clone(orders), c.orders)
				require.Equal(t, slices.Clone(atts), c.attempts)
				require.Equal(t, slices.Clone(rs), c.intents)
			},
		})
	})
}
