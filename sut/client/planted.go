package client

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"

	"github.com/google/uuid"

	"github.com/idemcheck/idemcheck/models"
)

// Planted lists the client's deliberate bugs (mutants). Each field's doc says
// the real-world trap it stands for. The zero value is the reference client;
// only sut/mutants sets a field, to prove the harness catches that fault class.
type Planted struct {
	// KeyPerOrder: the key is derived from the order id
	// (uuid.NewSHA1(uuid.NameSpaceURL, []byte("order-<id>"))), so a second
	// card/amount after a decline or abandon reuses it. Trap: "Sipariş başına
	// sabit key de yanlış" — the unit is the payment intent, not the order.
	KeyPerOrder bool
	// KeyAfterSend: the key is kept only in memory while the request is out
	// and written to the store after the response: a new attempt is stored
	// with an EMPTY IdempotencyKey before the send; the key lives in the
	// Client instance; it is written to the stored attempt only when the call
	// returns (any outcome). A crashed process loses it: a restarted client
	// that finds the open attempt with an empty key generates a NEW key for
	// the same attempt (same reference) and stores it before sending. Trap:
	// "Key'i göndermeden önce saklamamak".
	KeyAfterSend bool
	// ConflictIsFailure: a 409 is read as a final failure (and so not
	// retried): the attempt is
	// marked Declined, the order goes back to Placed, and Checkout answers
	// Declined 402 (so the shopper may pay again under a new intent). Trap:
	// "409'u hata ... saymak".
	ConflictIsFailure bool
	// ConflictIsSuccess: a 409 is read as paid (and so not retried): the
	// attempt Succeeded with an
	// empty charge id, the order Paid, Checkout answers Paid 200. Trap:
	// "409'u ... başarı saymak". ConflictIsFailure wins when both are set.
	ConflictIsSuccess bool
	// RetryWithoutKey: the client sends NO Idempotency-Key header and retries
	// POSTs anyway on timeouts/transport errors/5xx (and 409/429, like any
	// other request): the resilience default the seed article turns off
	// (RFC 9110 §9.2.2, DisableForUnsafeHttpMethods).
	RetryWithoutKey bool
	// RetryContractViolation: 400 and 422 are retried like transient errors,
	// though the seed article's table says "düzeltilmeden tekrar denenmez".
	RetryContractViolation bool
	// UnknownShownAsFailure: an unknown outcome is answered as Failed 500
	// ("payment failed") and the attempt is marked Abandoned with the order
	// back to Placed — and the card-change guard is off: GetOrStart starts a
	// new attempt for another card instead of refusing with a conflict
	// (only an open attempt with the same card and amount is reused). Trap:
	// "Bilinmeyen sonucu müşteriye hata olarak göstermek".
	UnknownShownAsFailure bool
	// ReconcilerNeverAbandons: reconciliation never abandons: attempts
	// without a charge stay Open forever (the order stuck PaymentPending,
	// the shopper unable to pay again).
	ReconcilerNeverAbandons bool
	// ReconcilerAbandonsCharged: reconciliation abandons every Open attempt
	// older than AbandonAfter (measured from LastSentAt as today) WITHOUT
	// looking at the charges it found; a younger attempt with a charge is
	// still Succeeded. The shopper is charged and the order Placed again.
	ReconcilerAbandonsCharged bool
	// AbandonByCreation: reconciliation measures an attempt's age from
	// its CreatedAt, not its last send, and abandons it on the first
	// empty lookup whatever was sent since: a resend of an old key that
	// the provider is still processing charges after the attempt was
	// abandoned (issue 28: reconciliation overlapping a resend in flight).
	AbandonByCreation bool
	// CallbackOwnKey: the payment-ready callback path (Client.PaymentReady)
	// charges the order under its own new attempt and key, bypassing the
	// open-attempt guard, so a webhook racing the shopper's return charges
	// twice.
	CallbackOwnKey bool
	// UnconditionalSettle: reconciliation's abandon is not conditional on
	// the attempt still being Open and unsent since it looked (an UPDATE
	// without "AND status = 'Open'"): when the shopper resends the key and
	// the charge is recorded between the reconciler's read and its write,
	// the reconciler overwrites the Succeeded attempt with Abandoned and puts
	// the order back to Placed while the provider holds the charge. Trap:
	// seed article 000's warning that several instances need conditional
	// updates.
	UnconditionalSettle bool
	// StaleKeyResend: an open attempt's key is resent at any age, even
	// after the provider's retention window (the reference client refuses
	// past KeyRetention − StaleKeyMargin and reconciles first, stalekey.go):
	// a provider that rightly forgot the key charges again.
	StaleKeyResend bool
}

// plantStart applies the planted bugs that change how an attempt starts.
func (c *Client) plantStart(sp *StartSpec) {
	pl := c.cfg.Planted
	if pl.KeyPerOrder { // planted bug: KeyPerOrder
		key := orderKey(sp.OrderID)
		sp.NewKey = func() string { return key }
	}
	if pl.KeyAfterSend { // planted bug: KeyAfterSend
		newID, newKey := sp.NewID, sp.NewKey
		// newID runs inside getOrStart's critical section, so a concurrent
		// call of this client that reuses the new attempt finds its key.
		sp.NewID = func() uuid.UUID {
			id := newID()
			c.unsaved.put(id, newKey())
			return id
		}
		sp.NewKey = func() string { return "" }
	}
	sp.NoCardGuard = pl.UnknownShownAsFailure // planted bug: UnknownShownAsFailure
}

// orderKey is the key KeyPerOrder derives from an order id.
func orderKey(orderID int64) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("order-"+strconv.FormatInt(orderID, 10))).String()
}

// chargeKeyAfterSend charges att under a key that reaches the store only
// when the call returns (planted bug: KeyAfterSend).
func (c *Client) chargeKeyAfterSend(ctx context.Context, att models.PaymentAttempt, cardToken string) chargeResult {
	if att.IdempotencyKey != "" { // written by an earlier call
		return c.gw.charge(ctx, att, cardToken)
	}
	key, created := c.unsaved.getOrNew(att.ID, c.cfg.NewKey)
	if created {
		// The process that started the attempt died with its key: start
		// over under a new one, stored before the send.
		if err := c.store.SetKey(c.storeCtx(ctx), c.epoch, att.ID, key); err != nil {
			return chargeResult{kind: chargeUnavailable, err: fmt.Errorf("%w: %w", ErrUnavailable, err)}
		}
	}
	att.IdempotencyKey = key
	res := c.gw.charge(ctx, att, cardToken)
	_ = c.store.SetKey(c.storeCtx(ctx), c.epoch, att.ID, key) // dropped (ErrFenced) when the client crashed meanwhile
	return res
}

// misread applies the planted misreadings of a final 409.
func (pl Planted) misread(res chargeResult) chargeResult {
	if res.kind != chargeUnknown || res.status != http.StatusConflict {
		return res
	}
	switch {
	case pl.ConflictIsFailure: // planted bug: ConflictIsFailure
		return chargeResult{kind: chargeDeclined, status: res.status}
	case pl.ConflictIsSuccess: // planted bug: ConflictIsSuccess
		return chargeResult{kind: chargeApproved, status: res.status}
	}
	return res
}

// unknownAsFailure abandons att and tells the shopper the payment failed
// (planted bug: UnknownShownAsFailure).
func (c *Client) unknownAsFailure(order models.Order, att models.PaymentAttempt, res chargeResult) CheckoutResult {
	attemptID := att.ID.String()
	o, err := c.store.EndAttempt(c.storeCtx(context.Background()), c.epoch, att.ID, models.AttemptAbandoned)
	if err != nil {
		return c.crashResult(order, attemptID, err)
	}
	return CheckoutResult{Outcome: OutcomeFailed, HTTPStatus: http.StatusInternalServerError, Order: o,
		AttemptID: attemptID, Err: fmt.Errorf("client: payment failed: %w", res.err)}
}

// shouldRetry is the pipeline's retry rule, ShouldRetry over the try's
// wire facts, unless a planted bug changes it.
func (p *pipeline) shouldRetry(wire wireFacts, resp *http.Response, err error) bool {
	pl := p.cfg.Planted
	may := wire.mayRetry
	if pl.RetryWithoutKey && wire.seen { // planted bug: RetryWithoutKey
		may = true
	}
	again := retryable(resp, err)
	if (pl.ConflictIsFailure || pl.ConflictIsSuccess) && err == nil && resp != nil && // planted bugs: ConflictIs*
		resp.StatusCode == http.StatusConflict {
		again = false // a client that reads 409 as final does not ask again
	}
	if pl.RetryContractViolation && err == nil && resp != nil && // planted bug: RetryContractViolation
		(resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusUnprocessableEntity) {
		again = true
	}
	return may && again
}

// unsavedKeys holds the keys KeyAfterSend keeps only in memory, by attempt
// id (planted bug: KeyAfterSend). It is safe for concurrent use.
type unsavedKeys struct {
	mu sync.Mutex // guards m
	m  map[uuid.UUID]string
}

func (u *unsavedKeys) put(id uuid.UUID, key string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.m == nil {
		u.m = make(map[uuid.UUID]string)
	}
	u.m[id] = key
}

// getOrNew returns attempt id's key, or keeps and returns a new one from
// newKey (created is true).
func (u *unsavedKeys) getOrNew(id uuid.UUID, newKey func() string) (key string, created bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if k, ok := u.m[id]; ok {
		return k, false
	}
	if u.m == nil {
		u.m = make(map[uuid.UUID]string)
	}
	k := newKey()
	u.m[id] = k
	return k, true
}
