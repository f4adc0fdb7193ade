package client_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/client"
)

func TestCheckout_status_mapping(t *testing.T) {
	cases := []struct {
		name        string
		answers     []answer
		outcome     client.Outcome
		httpStatus  int
		posts       int
		attempt     models.AttemptStatus
		order       models.OrderStatus
		err         error
		chargeID    string
		declineCode string
	}{
		{name: "201 is Paid", answers: []answer{reply(201, charge("ch_1"))},
			outcome: client.OutcomePaid, httpStatus: 200, posts: 1,
			attempt: models.AttemptSucceeded, order: models.OrderPaid, chargeID: "ch_1"},
		{name: "200 replay is Paid", answers: []answer{reply(200, charge("ch_2"))},
			outcome: client.OutcomePaid, httpStatus: 200, posts: 1,
			attempt: models.AttemptSucceeded, order: models.OrderPaid, chargeID: "ch_2"},
		{name: "402 is Declined and the order Placed again", answers: []answer{reply(402, declined("insufficient_funds"))},
			outcome: client.OutcomeDeclined, httpStatus: 402, posts: 1,
			attempt: models.AttemptDeclined, order: models.OrderPlaced, declineCode: "insufficient_funds"},
		{name: "409 x4 is never final: PaymentPending", answers: []answer{status(409)},
			outcome: client.OutcomePaymentPending, httpStatus: 202, posts: 4,
			attempt: models.AttemptOpen, order: models.OrderPaymentPending, err: client.ErrUnknownOutcome},
		{name: "500 x4 is PaymentPending", answers: []answer{status(500)},
			outcome: client.OutcomePaymentPending, httpStatus: 202, posts: 4,
			attempt: models.AttemptOpen, order: models.OrderPaymentPending, err: client.ErrUnknownOutcome},
		{name: "502 and 504 are unknown outcomes", answers: []answer{status(502), status(504)},
			outcome: client.OutcomePaymentPending, httpStatus: 202, posts: 4,
			attempt: models.AttemptOpen, order: models.OrderPaymentPending, err: client.ErrUnknownOutcome},
		{name: "503 x4 is Unavailable, the key kept", answers: []answer{status(503)},
			outcome: client.OutcomeUnavailable, httpStatus: 503, posts: 4,
			attempt: models.AttemptOpen, order: models.OrderPaymentPending, err: client.ErrUnavailable},
		{name: "429 x4 is Unavailable", answers: []answer{status(429)},
			outcome: client.OutcomeUnavailable, httpStatus: 503, posts: 4,
			attempt: models.AttemptOpen, order: models.OrderPaymentPending, err: client.ErrUnavailable},
		{name: "503 then 500 then 503s is PaymentPending: one unknown try is enough",
			answers: []answer{status(503), status(500), status(503)},
			outcome: client.OutcomePaymentPending, httpStatus: 202, posts: 4,
			attempt: models.AttemptOpen, order: models.OrderPaymentPending, err: client.ErrUnknownOutcome},
		{name: "503 503 201 is Paid", answers: []answer{status(503), status(503), reply(201, charge("ch_3"))},
			outcome: client.OutcomePaid, httpStatus: 200, posts: 3,
			attempt: models.AttemptSucceeded, order: models.OrderPaid, chargeID: "ch_3"},
		{name: "422 is a contract violation, never retried", answers: []answer{status(422)},
			outcome: client.OutcomeFailed, httpStatus: 500, posts: 1,
			attempt: models.AttemptOpen, order: models.OrderPaymentPending, err: client.ErrContractViolation},
		{name: "400 is a contract violation, never retried", answers: []answer{status(400)},
			outcome: client.OutcomeFailed, httpStatus: 500, posts: 1,
			attempt: models.AttemptOpen, order: models.OrderPaymentPending, err: client.ErrContractViolation},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := newWire(tc.answers...)
				c, store, _ := newClient(w)
				o := c.OpenOrder(54890, "TRY")

				res := c.Checkout(t.Context(), o.ID, "tok_visa")

				assert.Equal(t, tc.outcome, res.Outcome)
				assert.Equal(t, tc.httpStatus, res.HTTPStatus)
				assert.Len(t, w.posts(), tc.posts)
				assert.Len(t, w.distinctKeys(), 1, "every try carries the one key")
				att := onlyAttempt(t, store)
				assert.Equal(t, tc.attempt, att.Status)
				assert.Equal(t, tc.order, order(t, store, o.ID).Status)
				assert.Equal(t, tc.order, res.Order.Status)
				assert.Equal(t, att.ID.String(), res.AttemptID)
				assert.Equal(t, tc.chargeID, res.ChargeID)
				assert.Equal(t, tc.chargeID, att.ProviderChargeID)
				assert.Equal(t, tc.declineCode, res.DeclineCode)
				if tc.err == nil {
					assert.NoError(t, res.Err)
				} else {
					assert.ErrorIs(t, res.Err, tc.err)
				}
			})
		})
	}
}

func TestCheckout_sends_the_charge_with_a_quoted_UUID_key(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWire()
		c, store, _ := newClient(w, func(cfg *client.Config) { cfg.APIKey = "sk_test_secret" })
		o := c.OpenOrder(54890, "TRY")

		res := c.Checkout(t.Context(), o.ID, "tok_visa")
		require.Equal(t, client.OutcomePaid, res.Outcome)

		posts := w.posts()
		require.Len(t, posts, 1)
		p := posts[0]
		att := onlyAttempt(t, store)
		assert.Equal(t, "/v1/charges", p.Path)
		assert.Equal(t, `"`+att.IdempotencyKey+`"`, p.KeyHeader)
		assert.Equal(t, models.FormatKey(att.IdempotencyKey), p.KeyHeader)
		id, err := uuid.Parse(unquote(t, p.KeyHeader))
		require.NoError(t, err)
		assert.Equal(t, uuid.Version(7), id.Version())
		assert.Equal(t, "application/json", p.Header.Get("Content-Type"))
		assert.Equal(t, "Bearer sk_test_secret", p.Header.Get("Authorization"))
		assert.Equal(t, models.ChargeRequest{
			Amount: 54890, Currency: "TRY", Source: "tok_visa",
			Description: "Bookstore order 1", MerchantReference: att.Reference(),
		}, p.Body)
		assert.Equal(t, models.CardHash("tok_visa"), att.CardTokenHash)
		assert.Equal(t, int64(54890), att.Amount)
		assert.Equal(t, "TRY", att.Currency)
	})
}

func TestCheckout_stores_the_attempt_before_the_first_send(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWire(status(503))
		c, store, _ := newClient(w)
		o := c.OpenOrder(1000, "EUR")
		var seen []models.PaymentAttempt
		var seenOrder models.Order
		w.onRequest = func(n int, r *http.Request) {
			if n == 0 {
				seen = store.Attempts()
				seenOrder, _ = store.Order(o.ID)
			}
		}

		c.Checkout(t.Context(), o.ID, "tok_visa")

		require.Len(t, seen, 1)
		assert.Equal(t, models.AttemptOpen, seen[0].Status)
		assert.Equal(t, models.OrderPaymentPending, seenOrder.Status)
		assert.Equal(t, models.FormatKey(seen[0].IdempotencyKey), w.posts()[0].KeyHeader)
	})
}

func TestCheckout_unknown_and_paid_orders_send_nothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWire(reply(201, charge("ch_9")))
		c, _, _ := newClient(w)

		res := c.Checkout(t.Context(), 42, "tok_visa")
		assert.Equal(t, client.OutcomeFailed, res.Outcome)
		assert.Equal(t, http.StatusNotFound, res.HTTPStatus)
		assert.ErrorIs(t, res.Err, client.ErrUnknownOrder)

		o := c.OpenOrder(500, "TRY")
		require.Equal(t, client.OutcomePaid, c.Checkout(t.Context(), o.ID, "tok_visa").Outcome)
		again := c.Checkout(t.Context(), o.ID, "tok_mastercard")
		assert.Equal(t, client.OutcomePaid, again.Outcome)
		assert.Equal(t, 200, again.HTTPStatus)
		assert.Equal(t, "ch_9", again.ChargeID)
		assert.Len(t, w.posts(), 1)
	})
}

func TestCheckout_same_card_reuses_the_open_attempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWire(append(repeat(4, status(409)), reply(201, charge("ch_1")))...)
		c, store, _ := newClient(w)
		o := c.OpenOrder(54890, "TRY")

		first := c.Checkout(t.Context(), o.ID, "tok_visa")
		require.Equal(t, client.OutcomePaymentPending, first.Outcome)
		second := c.Checkout(t.Context(), o.ID, "tok_visa")

		assert.Equal(t, client.OutcomePaid, second.Outcome)
		assert.Equal(t, first.AttemptID, second.AttemptID)
		assert.Len(t, w.posts(), 5)
		assert.Len(t, w.distinctKeys(), 1)
		assert.Equal(t, models.AttemptSucceeded, onlyAttempt(t, store).Status)
	})
}

func TestCheckout_another_card_while_open_is_refused_without_a_request(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWire(status(409))
		c, store, _ := newClient(w)
		o := c.OpenOrder(54890, "TRY")
		require.Equal(t, client.OutcomePaymentPending, c.Checkout(t.Context(), o.ID, "tok_visa").Outcome)
		before := len(w.sent())

		res := c.Checkout(t.Context(), o.ID, "tok_mastercard")

		assert.Equal(t, client.OutcomePreviousPaymentBeingVerified, res.Outcome)
		assert.Equal(t, http.StatusConflict, res.HTTPStatus)
		assert.ErrorIs(t, res.Err, client.ErrAttemptConflict)
		assert.Len(t, w.sent(), before, "nothing sent")
		assert.Equal(t, models.AttemptOpen, onlyAttempt(t, store).Status)
		assert.Equal(t, models.OrderPaymentPending, order(t, store, o.ID).Status)
	})
}

func TestCheckout_after_a_decline_another_card_gets_a_new_key(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWire(reply(402, declined("insufficient_funds")), reply(201, charge("ch_2")))
		c, store, _ := newClient(w)
		o := c.OpenOrder(54890, "TRY")

		require.Equal(t, client.OutcomeDeclined, c.Checkout(t.Context(), o.ID, "tok_chargeDeclined").Outcome)
		res := c.Checkout(t.Context(), o.ID, "tok_mastercard")

		assert.Equal(t, client.OutcomePaid, res.Outcome)
		atts := store.Attempts()
		require.Len(t, atts, 2)
		assert.Equal(t, models.AttemptDeclined, atts[0].Status)
		assert.Equal(t, models.AttemptSucceeded, atts[1].Status)
		assert.NotEqual(t, atts[0].IdempotencyKey, atts[1].IdempotencyKey)
		assert.Len(t, w.distinctKeys(), 2)
	})
}

func TestCheckout_double_click_shares_one_attempt_and_key(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A provider that takes 500ms and answers the same charge per key.
		w := newWire(slow(500*time.Millisecond, reply(201, charge("ch_1"))))
		c, store, _ := newClient(w)
		o := c.OpenOrder(54890, "TRY")

		results := make([]client.CheckoutResult, 4)
		var wg sync.WaitGroup
		for i := range results {
			wg.Go(func() { results[i] = c.Checkout(t.Context(), o.ID, "tok_visa") })
		}
		wg.Wait()

		att := onlyAttempt(t, store)
		for _, r := range results {
			assert.Equal(t, client.OutcomePaid, r.Outcome)
			assert.Equal(t, att.ID.String(), r.AttemptID)
		}
		assert.Equal(t, []string{models.FormatKey(att.IdempotencyKey)}, w.distinctKeys())
	})
}

func TestCheckout_context_values_reach_every_try(t *testing.T) {
	type tag struct{}
	synctest.Test(t, func(t *testing.T) {
		var tags []any
		w := newWire(status(503))
		w.onRequest = func(_ int, r *http.Request) { tags = append(tags, r.Context().Value(tag{})) }
		c, _, _ := newClient(w)
		o := c.OpenOrder(100, "TRY")

		c.Checkout(context.WithValue(t.Context(), tag{}, "op-7"), o.ID, "tok_visa")

		assert.Equal(t, []any{"op-7", "op-7", "op-7", "op-7"}, tags)
	})
}

func TestCheckout_errors_never_show_the_card_token_or_api_key(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWire(func(r *http.Request) (*http.Response, error) { return nil, errors.New("connection reset") })
		c, _, _ := newClient(w, func(cfg *client.Config) { cfg.APIKey = "sk_test_secret" })
		o := c.OpenOrder(100, "TRY")

		res := c.Checkout(t.Context(), o.ID, "tok_visa_secret")

		require.Error(t, res.Err)
		assert.Equal(t, client.OutcomePaymentPending, res.Outcome)
		assert.NotContains(t, res.Err.Error(), "tok_visa_secret")
		assert.NotContains(t, res.Err.Error(), "sk_test_secret")
	})
}
