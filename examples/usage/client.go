package usage

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/idemcheck/idemcheck/checkout"
)

// client is a small checkout written against package checkout and
// docs/provider-api.md only: one payment attempt per order at a time, its
// idempotency key chosen before the first send and kept for every retry;
// a timeout, 409 or 5xx is an unknown outcome (PaymentPending), which
// reconciliation settles by asking the provider for the attempt's
// merchant_reference. It has no durable store and no view of its own
// (checkout.Viewer), so two invariants are "not judged".
type client struct {
	env checkout.Env

	mu       sync.Mutex // guards attempts
	attempts map[int64]*attempt
}

// attempt is an order's open payment attempt.
type attempt struct {
	key, card, ref string
	firstSent      time.Time // the key's first send
	sentAt         time.Time
	charge         string // set once paid
}

func newClient(env checkout.Env) (checkout.Client, error) {
	return &client{env: env, attempts: map[int64]*attempt{}}, nil
}

// Checkout implements checkout.Client.
func (c *client) Checkout(ctx context.Context, o checkout.Order, card string) checkout.Result {
	c.mu.Lock()
	a := c.attempts[o.ID]
	switch {
	case a != nil && a.charge != "":
		c.mu.Unlock()
		return checkout.Result{Outcome: checkout.Paid, ChargeID: a.charge}
	case a != nil && a.card != card:
		c.mu.Unlock()
		return checkout.Result{Outcome: checkout.Pending, Status: http.StatusConflict} // the other card's payment is unknown
	case a != nil && c.env.Now().Sub(a.firstSent) >= 23*time.Hour:
		// Near the provider's 24 h retention window the key may be
		// forgotten: never resent (no-stale-key); reconciliation settles it.
		c.mu.Unlock()
		return checkout.Result{Outcome: checkout.Pending}
	case a == nil:
		id := c.env.NewKey()
		a = &attempt{key: c.env.NewKey(), card: card, ref: fmt.Sprintf("bookstore-%d-%s", o.ID, hex32(id)), firstSent: c.env.Now()}
		c.attempts[o.ID] = a
	}
	a.sentAt = c.env.Now()
	key, ref := a.key, a.ref
	c.mu.Unlock()

	body, _ := json.Marshal(map[string]any{"amount": o.Amount, "currency": o.Currency, "source": card,
		"description": fmt.Sprintf("Bookstore order %d", o.ID), "merchant_reference": ref})
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second) // the whole call, retries included
	defer cancel()
	unknown := false
	for try := range 3 {
		if try > 0 && sleep(ctx, time.Second) != nil {
			break
		}
		status, charge := c.post(ctx, key, body)
		switch {
		case status == http.StatusOK || status == http.StatusCreated:
			c.mu.Lock()
			a.charge = charge
			c.mu.Unlock()
			return checkout.Result{Outcome: checkout.Paid, ChargeID: charge}
		case status == http.StatusPaymentRequired && !unknown:
			c.drop(o.ID, a)
			return checkout.Result{Outcome: checkout.Declined}
		case status == http.StatusPaymentRequired, status == http.StatusBadRequest, status == http.StatusUnprocessableEntity:
			return checkout.Result{Outcome: checkout.Pending} // final, but an earlier try may have charged
		case status == 0, status == http.StatusConflict, status >= 500 && status != http.StatusServiceUnavailable:
			unknown = true
		}
	}
	if unknown {
		return checkout.Result{Outcome: checkout.Pending}
	}
	return checkout.Result{Outcome: checkout.Failed} // 429 / 503 only: nothing charged; the key is kept
}

// post sends one try and returns its status (0: no answer) and the charge
// id of a 2xx.
func (c *client) post(ctx context.Context, key string, body []byte) (int, string) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	r, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.env.BaseURL+"/v1/charges", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Idempotency-Key", `"`+key+`"`)
	resp, err := c.env.HTTPClient.Do(r)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	var ch struct{ ID string }
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&ch); err != nil && resp.StatusCode < 300 {
		return 0, "" // a 2xx we cannot read is an unknown outcome
	}
	return resp.StatusCode, ch.ID
}

// drop forgets a, order's attempt, when nothing was charged.
func (c *client) drop(order int64, a *attempt) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.attempts[order] == a {
		delete(c.attempts, order)
	}
}

// Reconcile implements checkout.Client: an attempt unpaid 2 minutes after
// its last send is looked up by merchant_reference; found, it is paid; not
// found 30 minutes after, it is given up, so the order can be paid again.
func (c *client) Reconcile(ctx context.Context) (string, error) {
	c.mu.Lock()
	due := map[int64]attempt{}
	for id, a := range c.attempts {
		if a.charge == "" && c.env.Now().Sub(a.sentAt) >= 2*time.Minute {
			due[id] = *a
		}
	}
	c.mu.Unlock()
	settled := 0
	for id, seen := range due {
		charge, err := c.find(ctx, seen.ref)
		if err != nil {
			continue
		}
		c.mu.Lock()
		a := c.attempts[id]
		switch {
		case a == nil || a.key != seen.key || a.charge != "":
		case charge != "":
			a.charge = charge
			settled++
		case a.sentAt.Equal(seen.sentAt) && c.env.Now().Sub(a.sentAt) >= 30*time.Minute:
			delete(c.attempts, id)
			settled++
		}
		c.mu.Unlock()
	}
	return fmt.Sprintf("%d due, %d settled", len(due), settled), nil
}

// find returns the id of reference's succeeded charge, "" for none.
func (c *client) find(ctx context.Context, reference string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	r, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.env.BaseURL+"/v1/charges?merchant_reference="+url.QueryEscape(reference), nil)
	resp, err := c.env.HTTPClient.Do(r)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("find charges: %s", resp.Status)
	}
	var list struct {
		Data []struct{ ID, Status string }
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&list); err != nil {
		return "", err
	}
	for _, ch := range list.Data {
		if ch.Status == "succeeded" {
			return ch.ID, nil
		}
	}
	return "", nil
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// hex32 is a UUID string as 32 hex digits (the merchant_reference's
// attempt part, docs/provider-api.md).
func hex32(uuid string) string {
	b := []byte(uuid)[:0:0]
	for _, r := range []byte(uuid) {
		if r != '-' {
			b = append(b, r)
		}
	}
	return string(b)
}
