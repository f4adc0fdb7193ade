package checkout_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/idemcheck/idemcheck/checkout"
	"github.com/idemcheck/idemcheck/models"
)

// shop is a small checkout written only against package checkout and
// docs/provider-api.md, not the reference client: one attempt per intent
// with its key stored before the first send, up to three tries under that
// key, 409 / timeouts / 5xx as unknown outcomes, and a reconciliation that
// asks the provider by merchant_reference. Its "durable store" is the
// struct itself; Restart starts a new process over it.
type shop struct {
	env checkout.Env
	// auth, when set, is the Authorization header of every request (an
	// SDK always authenticates).
	auth string
	// describe, when set, is the charge description of an order: a body
	// format of the shop's own (bodyformat_test.go); nil: "Bookstore
	// order N", the reference client's.
	describe func(order int64) string
	// metadata, when set, is a member outside the contract that each try
	// of req adds to the body, "metadata": metadata(req, try)
	// (bodyformat_test.go); nil: the contract's five fields only.
	metadata func(req models.ChargeRequest, try int) any

	mu       sync.Mutex // guards everything below
	orders   map[int64]*models.Order
	attempts []*models.PaymentAttempt
	epoch    int             // the process now running; writes of an older one are dropped
	life     context.Context // the process's lifetime, cancelled by Restart
	die      context.CancelFunc
}

func newShop(env checkout.Env) (checkout.Client, error) {
	s := &shop{env: env, orders: map[int64]*models.Order{}}
	s.life, s.die = context.WithCancel(context.Background())
	return s, nil
}

// Checkout implements checkout.Client.
func (s *shop) Checkout(ctx context.Context, o checkout.Order, token string) checkout.Result {
	s.mu.Lock()
	epoch, life := s.epoch, s.life
	order := s.orders[o.ID]
	if order == nil {
		order = &models.Order{ID: o.ID, Total: o.Amount, Currency: o.Currency, Status: models.OrderPlaced}
		s.orders[o.ID] = order
	}
	if order.Status == models.OrderPaid {
		s.mu.Unlock()
		return checkout.Result{Outcome: checkout.Paid, ChargeID: order.ProviderChargeID}
	}
	a := s.openAttempt(o.ID)
	switch {
	case a != nil && a.CardTokenHash != models.CardHash(token):
		s.mu.Unlock()
		return checkout.Result{Outcome: checkout.Pending, Status: http.StatusConflict} // another card's payment is still being verified
	case a != nil && s.env.Now().Sub(a.CreatedAt) >= 23*time.Hour:
		s.mu.Unlock()
		// The key is near the provider's 24 h retention window: never
		// resent (no-stale-key); the order waits for reconciliation.
		return checkout.Result{Outcome: checkout.Pending}
	case a == nil:
		a = &models.PaymentAttempt{ID: uuid.MustParse(s.env.NewKey()), OrderID: o.ID, IdempotencyKey: s.env.NewKey(),
			Amount: o.Amount, Currency: o.Currency, CardTokenHash: models.CardHash(token), CreatedAt: s.env.Now(), Status: models.AttemptOpen}
		s.attempts = append(s.attempts, a)
		order.Status = models.OrderPaymentPending
	}
	a.LastSentAt = s.env.Now() // stored before the send, like the key
	req := models.ChargeRequest{Amount: a.Amount, Currency: a.Currency, Source: token,
		Description: s.description(o.ID), MerchantReference: a.Reference()}
	key := a.IdempotencyKey
	s.mu.Unlock()

	ctx, cancel := context.WithTimeout(ctx, 10*time.Second) // the whole call, retries included
	defer cancel()
	defer context.AfterFunc(life, cancel)() // a crash abandons the call
	status, charge, unknown := s.send(ctx, key, req)

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.epoch != epoch {
		return checkout.Result{Outcome: checkout.Failed} // crashed meanwhile: nothing reaches the store
	}
	switch {
	case status == http.StatusCreated || status == http.StatusOK:
		s.settle(a, charge.ID)
		return checkout.Result{Outcome: checkout.Paid, ChargeID: charge.ID}
	case status == http.StatusPaymentRequired:
		if a.Status == models.AttemptOpen {
			a.Status = models.AttemptDeclined
		}
		if s.openAttempt(o.ID) == nil { // a later click may have opened another attempt meanwhile
			order.Status = models.OrderPlaced
		}
		return checkout.Result{Outcome: checkout.Declined}
	case unknown:
		return checkout.Result{Outcome: checkout.Pending}
	}
	return checkout.Result{Outcome: checkout.Failed} // 429/503 only: nothing charged; the key is kept
}

// description is the charge description of order (describe).
func (s *shop) description(order int64) string {
	if s.describe != nil {
		return s.describe(order)
	}
	return fmt.Sprintf("Bookstore order %d", order)
}

// send posts req under key, up to three tries a second apart, and returns
// the last status (0 for none), the charge of a 2xx, and whether any try's
// outcome was unknown (docs/provider-api.md, "What unknown outcome means").
func (s *shop) send(ctx context.Context, key string, req models.ChargeRequest) (int, models.Charge, bool) {
	body, _ := json.Marshal(req)
	status, unknown := 0, false
	for try := 0; try < 3; try++ {
		if try > 0 {
			select {
			case <-ctx.Done():
				return status, models.Charge{}, true
			case <-time.After(time.Second):
			}
		}
		if s.metadata != nil {
			body = withMetadata(req, s.metadata(req, try))
		}
		tctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		r, _ := http.NewRequestWithContext(tctx, http.MethodPost, s.env.BaseURL+"/v1/charges", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Idempotency-Key", `"`+key+`"`)
		s.authorize(r)
		resp, err := s.env.HTTPClient.Do(r)
		if err != nil {
			cancel()
			status, unknown = 0, true
			continue
		}
		var c models.Charge
		raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		_ = resp.Body.Close()
		cancel()
		status = resp.StatusCode
		switch {
		case (status == 200 || status == 201) && err == nil && json.Unmarshal(raw, &c) == nil:
			return status, c, unknown
		case status == 402, status == 400, status == 422: // final: never retried
			return status, c, unknown
		case status == 409, status >= 500 && status != 503, status < 300:
			unknown = true
		}
	}
	return status, models.Charge{}, unknown
}

// withMetadata is req's JSON with a "metadata" member m.
func withMetadata(req models.ChargeRequest, m any) []byte {
	body, _ := json.Marshal(struct {
		models.ChargeRequest
		Metadata any `json:"metadata"`
	}{req, m})
	return body
}

// authorize sets r's Authorization header, if the shop sends one.
func (s *shop) authorize(r *http.Request) {
	if s.auth != "" {
		r.Header.Set("Authorization", s.auth)
	}
}

// openAttempt is order's Open attempt, or nil. s.mu is held.
func (s *shop) openAttempt(order int64) *models.PaymentAttempt {
	for _, a := range s.attempts {
		if a.OrderID == order && a.Status == models.AttemptOpen {
			return a
		}
	}
	return nil
}

// settle marks a Succeeded with charge and its order Paid. s.mu is held.
func (s *shop) settle(a *models.PaymentAttempt, charge string) {
	a.Status, a.ProviderChargeID = models.AttemptSucceeded, charge
	o := s.orders[a.OrderID]
	o.Status, o.ProviderChargeID = models.OrderPaid, charge
}

// Reconcile implements checkout.Client: every attempt Open for 2 minutes
// since its last send is looked up by merchant_reference; found, it
// succeeds; not found after 30 minutes, it is abandoned — unless it was
// resent while the provider was asked.
func (s *shop) Reconcile(ctx context.Context) (string, error) {
	s.mu.Lock()
	var due []models.PaymentAttempt
	for _, a := range s.attempts {
		if a.Status == models.AttemptOpen && s.env.Now().Sub(a.LastSentAt) >= 2*time.Minute {
			due = append(due, *a)
		}
	}
	s.mu.Unlock()
	settled := 0
	for _, seen := range due {
		charges, err := s.find(ctx, seen.Reference())
		if err != nil {
			continue
		}
		s.mu.Lock()
		for _, a := range s.attempts {
			if a.ID != seen.ID || a.Status != models.AttemptOpen {
				continue
			}
			switch {
			case len(charges) > 0:
				s.settle(a, charges[0].ID)
				settled++
			case a.LastSentAt.Equal(seen.LastSentAt) && s.env.Now().Sub(a.LastSentAt) >= 30*time.Minute:
				a.Status, s.orders[a.OrderID].Status = models.AttemptAbandoned, models.OrderPlaced
				settled++
			}
		}
		s.mu.Unlock()
	}
	return fmt.Sprintf("%d due, %d settled", len(due), settled), nil
}

// find lists the succeeded charges of reference.
func (s *shop) find(ctx context.Context, reference string) ([]models.Charge, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	r, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.env.BaseURL+"/v1/charges?merchant_reference="+url.QueryEscape(reference), nil)
	s.authorize(r)
	resp, err := s.env.HTTPClient.Do(r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var list struct{ Data []models.Charge }
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("find charges: %s", resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&list); err != nil {
		return nil, err
	}
	var ok []models.Charge
	for _, c := range list.Data {
		if c.Status == "succeeded" {
			ok = append(ok, c)
		}
	}
	return ok, nil
}

// View implements checkout.Viewer.
func (s *shop) View(context.Context) (checkout.View, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var v checkout.View
	for _, id := range slices.Sorted(maps.Keys(s.orders)) {
		v.Orders = append(v.Orders, *s.orders[id])
	}
	for _, a := range s.attempts {
		v.Attempts = append(v.Attempts, *a)
	}
	return v, nil
}

// Restart implements checkout.Restarter: the running process dies (its
// calls in flight are cancelled and their writes dropped) and a new one
// starts over the same attempts.
func (s *shop) Restart(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.die()
	s.epoch++
	s.life, s.die = context.WithCancel(context.Background())
	return nil
}
