package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
	"github.com/failsafe-go/failsafe-go/timeout"
	"github.com/google/uuid"
)

// answer is one provider answer, its body read.
type answer struct {
	status int
	body   []byte
}

// unknownStatus: the charge's fate is not known (docs/provider-api.md).
func unknownStatus(code int) bool {
	return code == http.StatusConflict || code == 500 || code == 502 || code == 504
}

// checkout is POST /orders/{id}/checkout (docs/client-api.md).
func (sh *shop) checkout(w http.ResponseWriter, r *http.Request) {
	var in struct {
		CardToken string `json:"card_token"`
	}
	if err := decode(r, &in); err != nil || in.CardToken == "" {
		reply(w, http.StatusBadRequest, map[string]string{"error": "want {card_token}"})
		return
	}
	sh.mu.Lock()
	o := sh.lookup(r)
	switch {
	case o == nil:
		sh.mu.Unlock()
		reply(w, http.StatusNotFound, nil)
		return
	case o.Status == "Paid":
		sh.mu.Unlock()
		reply(w, http.StatusOK, map[string]string{"status": "Paid", "charge_id": o.ChargeID})
		return
	}
	var a *attempt
	if open := sh.openAttempts(o.ID); len(open) > 0 {
		a = open[0]
		if a.CardHash != cardHash(in.CardToken) {
			if sh.s.bug != "no-card-guard" {
				sh.mu.Unlock()
				reply(w, http.StatusConflict, map[string]string{"status": "PreviousPaymentBeingVerified"})
				return
			}
			a = nil // planted bug: a second intent while the first is open
		}
	}
	t := now(r)
	if a != nil && t.Sub(a.CreatedAt) >= 23*time.Hour {
		// The key is near the provider's 24 h retention window: never
		// resent (no-stale-key); the order waits for reconciliation.
		sh.mu.Unlock()
		reply(w, http.StatusAccepted, map[string]string{"status": "PaymentPending"})
		return
	}
	if a == nil {
		a = &attempt{ID: uuid.New(), OrderID: o.ID, Amount: o.Total, Currency: o.Currency,
			CardHash: cardHash(in.CardToken), CreatedAt: t, Status: "Open", Key: uuid.NewString()}
		sh.attempts = append(sh.attempts, a)
		o.Status = "PaymentPending"
	}
	key := a.Key
	if sh.s.bug == "key-after-send" && key != "" && a.LastSentAt.IsZero() {
		a.Key = "" // planted bug: the key is written after the answer
	}
	if key == "" {
		key = uuid.NewString()
	}
	a.LastSentAt = t // stored before the send, like the key
	body, _ := json.Marshal(map[string]any{"amount": a.Amount, "currency": a.Currency, "source": in.CardToken,
		"description": fmt.Sprintf("Bookstore order %d", o.ID), "merchant_reference": a.reference()})
	epoch, life := sh.epoch, sh.life
	sh.mu.Unlock()

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(life, cancel)() // a crash abandons the call
	ans, unknown := sh.send(ctx, key, body, r.Header.Get("Idemcheck-Op"))

	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.epoch != epoch {
		reply(w, http.StatusServiceUnavailable, map[string]string{"status": "Crashed"})
		return
	}
	if a.Key == "" {
		a.Key = key // key-after-send: stored only now
	}
	var charge struct {
		ID string `json:"id"`
	}
	switch {
	case ans.status/100 == 2 && json.Unmarshal(ans.body, &charge) == nil && charge.ID != "":
		sh.settle(a, "Succeeded", charge.ID)
		reply(w, http.StatusOK, map[string]string{"status": "Paid", "charge_id": charge.ID})
	case ans.status == http.StatusPaymentRequired:
		sh.settle(a, "Declined", "")
		reply(w, http.StatusPaymentRequired, map[string]string{"status": "Declined"})
	case ans.status == http.StatusConflict && sh.s.bug == "conflict-is-failure":
		sh.settle(a, "Abandoned", "") // planted bug: 409 read as a failure
		reply(w, http.StatusServiceUnavailable, map[string]string{"status": "Failed"})
	case unknown:
		reply(w, http.StatusAccepted, map[string]string{"status": "PaymentPending"})
	default: // 429/503 only, or nothing sent: nothing was charged; the key is kept
		reply(w, http.StatusServiceUnavailable, map[string]string{"status": "Failed"})
	}
}

// send posts body under key through the pipeline: total timeout → retry
// (same key; transport errors, 409, 429 and 5xx) → attempt timeout. It
// returns the last answer and whether any try's outcome was unknown.
func (sh *shop) send(ctx context.Context, key string, body []byte, op string) (answer, bool) {
	var unknown atomic.Bool
	retry := retrypolicy.NewBuilder[answer]().
		HandleIf(func(a answer, err error) bool {
			if sh.s.bug == "conflict-is-failure" && a.status == http.StatusConflict {
				return false
			}
			return err != nil || a.status == 409 || a.status == 429 || a.status >= 500
		}).
		AbortIf(func(answer, error) bool { return ctx.Err() != nil }).
		WithMaxRetries(sh.s.retries).
		WithDelay(sh.s.retryDelay).
		ReturnLastFailure().
		Build()
	ans, err := failsafe.With[answer](timeout.New[answer](sh.s.totalTimeout), retry, timeout.New[answer](sh.s.attemptTimeout)).
		WithContext(ctx).
		GetWithExecution(func(exec failsafe.Execution[answer]) (answer, error) {
			k := key
			if sh.s.bug == "fresh-key-per-request" {
				k = uuid.NewString() // planted bug: a key per HTTP try
			}
			a, err := sh.post(exec.Context(), k, body, op)
			if err != nil || unknownStatus(a.status) {
				unknown.Store(true)
			}
			return a, err
		})
	if err != nil {
		unknown.Store(true) // a timeout or a lost answer: it may have been charged
		if ans.status == 0 {
			return answer{}, true
		}
	}
	return ans, unknown.Load()
}

// post is one try of POST /v1/charges.
func (sh *shop) post(ctx context.Context, key string, body []byte, op string) (answer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(sh.s.provider, "/")+"/v1/charges", bytes.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", `"`+key+`"`) // a Structured Field String
	sh.headers(req, op)
	resp, err := sh.http.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return answer{status: resp.StatusCode, body: raw}, err
}

// reconcile is POST /reconcile: every attempt Open for min-age since its
// last send is looked up by merchant_reference; a succeeded charge settles
// it, none after abandon-after abandons it — unless it was resent while
// the provider was asked.
func (sh *shop) reconcile(w http.ResponseWriter, r *http.Request) {
	t := now(r)
	sh.mu.Lock()
	var due []attempt
	for _, a := range sh.attempts {
		if a.Status == "Open" && t.Sub(a.LastSentAt) >= sh.s.minAge {
			due = append(due, *a)
		}
	}
	epoch := sh.epoch
	sh.mu.Unlock()
	settled, failed := 0, 0
	for _, seen := range due {
		charge, err := sh.find(r.Context(), seen.reference(), r.Header.Get("Idemcheck-Op"))
		if err != nil {
			failed++
			continue
		}
		sh.mu.Lock()
		for _, a := range sh.attempts {
			if a.ID != seen.ID || a.Status != "Open" || sh.epoch != epoch {
				continue
			}
			switch {
			case charge != "":
				sh.settle(a, "Succeeded", charge)
				settled++
			case a.LastSentAt.Equal(seen.LastSentAt) && t.Sub(a.LastSentAt) >= sh.s.abandonAfter:
				sh.settle(a, "Abandoned", "")
				settled++
			}
		}
		sh.mu.Unlock()
	}
	reply(w, http.StatusOK, map[string]string{"summary": fmt.Sprintf("checked %d, settled %d, errors %d", len(due), settled, failed)})
}

// find is the id of reference's succeeded charge, "" for none.
func (sh *shop) find(ctx context.Context, reference, op string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, sh.s.attemptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(sh.s.provider, "/")+"/v1/charges?merchant_reference="+url.QueryEscape(reference), nil)
	if err != nil {
		return "", err
	}
	sh.headers(req, op)
	resp, err := sh.http.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("find charges: %s", resp.Status)
	}
	var list struct {
		Data []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&list); err != nil {
		return "", err
	}
	for _, c := range list.Data {
		if c.Status == "succeeded" {
			return c.ID, nil
		}
	}
	return "", nil
}

// headers sets what every provider request carries: the operation id the
// harness handed the call (docs/client-api.md) and, with -api-key, the
// merchant's credential, as an SDK sends it.
func (sh *shop) headers(req *http.Request, op string) {
	if op != "" {
		req.Header.Set("Idemcheck-Op", op)
	}
	if sh.s.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+sh.s.apiKey)
	}
}
