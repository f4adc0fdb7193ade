package main

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
)

// order and attempt are the durable records, in the JSON of
// docs/client-api.md (GET /state).
type order struct {
	ID       int64  `json:"id"`
	Total    int64  `json:"total"`
	Currency string `json:"currency"`
	Status   string `json:"status"` // Placed, PaymentPending, Paid
	ChargeID string `json:"provider_charge_id,omitempty"`
}

type attempt struct {
	ID         uuid.UUID `json:"id"`
	OrderID    int64     `json:"order_id"`
	Key        string    `json:"idempotency_key"`
	Amount     int64     `json:"amount"`
	Currency   string    `json:"currency"`
	CardHash   string    `json:"card_token_hash"`
	CreatedAt  time.Time `json:"created_at"`
	Status     string    `json:"status"` // Open, Succeeded, Declined, Abandoned
	ChargeID   string    `json:"provider_charge_id,omitempty"`
	LastSentAt time.Time `json:"last_sent_at"`
}

// reference is the attempt's merchant_reference (docs/provider-api.md).
func (a *attempt) reference() string {
	return fmt.Sprintf("bookstore-%d-%s", a.OrderID, hex.EncodeToString(a.ID[:]))
}

// shop is the service: a durable store (orders, attempts) and the running
// process (epoch, life), which /restart replaces. Safe for concurrent use.
type shop struct {
	s    settings
	http *http.Client

	mu       sync.Mutex // guards everything below
	orders   map[int64]*order
	attempts []*attempt
	epoch    int
	life     context.Context
	die      context.CancelFunc
}

func newShop(s settings) *shop {
	sh := &shop{s: s, orders: map[int64]*order{},
		http: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}}
	sh.life, sh.die = context.WithCancel(context.Background())
	return sh
}

func (sh *shop) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		reply(w, http.StatusOK, map[string][]string{"capabilities": {"restart", "state"}})
	})
	mux.HandleFunc("POST /orders", sh.placeOrder)
	mux.HandleFunc("GET /orders/{id}", sh.getOrder)
	mux.HandleFunc("POST /orders/{id}/checkout", sh.checkout)
	mux.HandleFunc("POST /reconcile", sh.reconcile)
	mux.HandleFunc("POST /restart", sh.restart)
	mux.HandleFunc("GET /state", sh.state)
	return mux
}

// now is the harness's clock (Idemcheck-Now), or the wall clock.
func now(r *http.Request) time.Time {
	if t, err := time.Parse(time.RFC3339Nano, r.Header.Get("Idemcheck-Now")); err == nil {
		return t
	}
	return time.Now()
}

func reply(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if body != nil {
		_ = json.NewEncoder(w).Encode(body)
	}
}

func decode(r *http.Request, v any) error {
	return json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(v)
}

func (sh *shop) placeOrder(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Amount   int64  `json:"amount"`
		Currency string `json:"currency"`
	}
	if err := decode(r, &in); err != nil || in.Amount <= 0 || in.Currency == "" {
		reply(w, http.StatusBadRequest, map[string]string{"error": "want {amount, currency}"})
		return
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	id := int64(len(sh.orders) + 1)
	sh.orders[id] = &order{ID: id, Total: in.Amount, Currency: in.Currency, Status: "Placed"}
	reply(w, http.StatusCreated, map[string]int64{"id": id})
}

// lookup is the order named in the path, or nil. sh.mu is held.
func (sh *shop) lookup(r *http.Request) *order {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	return sh.orders[id]
}

func (sh *shop) getOrder(w http.ResponseWriter, r *http.Request) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	o := sh.lookup(r)
	if o == nil {
		reply(w, http.StatusNotFound, nil)
		return
	}
	reply(w, http.StatusOK, o)
}

func (sh *shop) state(w http.ResponseWriter, _ *http.Request) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	var st struct {
		Orders   []*order   `json:"orders"`
		Attempts []*attempt `json:"attempts"`
	}
	for _, id := range slices.SortedFunc(maps.Keys(sh.orders), cmp.Compare) {
		st.Orders = append(st.Orders, sh.orders[id])
	}
	st.Attempts = sh.attempts
	reply(w, http.StatusOK, st)
}

// restart is a crash: the process's calls in flight are cancelled and
// their writes dropped (epoch); the store stays.
func (sh *shop) restart(w http.ResponseWriter, _ *http.Request) {
	sh.mu.Lock()
	sh.die()
	sh.epoch++
	sh.life, sh.die = context.WithCancel(context.Background())
	sh.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// openAttempts are order id's Open attempts. sh.mu is held.
func (sh *shop) openAttempts(id int64) []*attempt {
	var out []*attempt
	for _, a := range sh.attempts {
		if a.OrderID == id && a.Status == "Open" {
			out = append(out, a)
		}
	}
	return out
}

// settle records a's end. sh.mu is held.
func (sh *shop) settle(a *attempt, status, charge string) {
	a.Status, a.ChargeID = status, charge
	o := sh.orders[a.OrderID]
	switch {
	case status == "Succeeded":
		o.Status, o.ChargeID = "Paid", charge
	case o.Status != "Paid" && len(sh.openAttempts(o.ID)) == 0:
		o.Status = "Placed"
	}
}

func cardHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
