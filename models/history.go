package models

import (
	"context"
	"encoding/json"
	"sort"
	"sync"
	"time"
)

// OpKind names what a shopper or operator did.
type OpKind string

// The operations a history records.
const (
	OpOpenOrder OpKind = "open-order"
	OpCheckout  OpKind = "checkout"
	OpReconcile OpKind = "reconcile"
	OpAdvance   OpKind = "advance-time"
	OpCrash     OpKind = "crash-restart"
	OpHeal      OpKind = "heal-faults"
	// OpProbe is a raw request the harness sends itself, reusing a stored
	// key, to exercise the provider's replay and fingerprint paths.
	OpProbe OpKind = "probe"
)

// Step is one action of the drawn sequence, numbered from 1. One step may
// run several operations at once (a double click fans out into 2–4).
type Step struct {
	N      int       `json:"n"`
	Action string    `json:"action"`
	Args   string    `json:"args,omitempty"`
	At     time.Time `json:"at"`
}

// Operation is one client-level call: invoked at InvokedAt, returned (or
// lost in a crash) at ReturnedAt. Card is a label ("visa"), never a token.
// Amount is in minor units.
type Operation struct {
	ID         int       `json:"id"`
	Step       int       `json:"step"`
	Actor      string    `json:"actor"`
	Kind       OpKind    `json:"kind"`
	OrderID    int64     `json:"order_id,omitempty"`
	Card       string    `json:"card,omitempty"`
	Amount     int64     `json:"amount,omitempty"`
	Currency   string    `json:"currency,omitempty"`
	Detail     string    `json:"detail,omitempty"`
	InvokedAt  time.Time `json:"invoked_at"`
	ReturnedAt time.Time `json:"returned_at,omitzero"`
	Returned   bool      `json:"returned"`
	// Lost is true when the client crashed before the call returned.
	Lost       bool   `json:"lost,omitempty"`
	Result     string `json:"result,omitempty"`
	HTTPStatus int    `json:"http_status,omitempty"`
	AttemptID  string `json:"attempt_id,omitempty"`
	ChargeID   string `json:"charge_id,omitempty"`
}

// Exchange is one HTTP request on the wire and what became of it, as the
// fault layer saw it: what the client sent, the fault applied, what the
// provider answered (if the request reached it) and what the client got.
// Seq and ProviderSeq place it in the history's single order of events.
type Exchange struct {
	ID     int    `json:"id"`
	Seq    int    `json:"seq"`
	OpID   int    `json:"op_id,omitempty"`
	Method string `json:"method"`
	Path   string `json:"path"`
	Query  string `json:"query,omitempty"`
	// KeyHeader is the Idempotency-Key header exactly as sent; HasKey is
	// false when the request carried none. Key is the parsed key.
	KeyHeader string `json:"key_header,omitempty"`
	HasKey    bool   `json:"has_key"`
	Key       string `json:"key,omitempty"`
	// Fingerprint is models.Fingerprint of the decoded body; the body's
	// fields follow, with the card as its SHA-256 (CardHash), never the token,
	// and as its label (Card, see CardLabel) only when it is a public test
	// card, so that a report can rebuild the body of a test run.
	Fingerprint       string `json:"fingerprint,omitempty"`
	MerchantReference string `json:"merchant_reference,omitempty"`
	Amount            int64  `json:"amount,omitempty"`
	Currency          string `json:"currency,omitempty"`
	CardHash          string `json:"card_hash,omitempty"`
	Card              string `json:"card,omitempty"`
	Description       string `json:"description,omitempty"`
	// Extra is the members of the body outside the request's own fields
	// (ExtraMembers: a client's metadata), one JSON object, nil when there
	// are none. It is kept in memory only, never written to a history or a
	// report (it may hold what they must not), so that a probe can resend
	// the body the client sent.
	Extra  json.RawMessage `json:"-"`
	Fault  string          `json:"fault"`
	SentAt time.Time       `json:"sent_at"`
	// Forwarded is true when the request reached the provider, at
	// ArrivedAt, as event ArrivalSeq of the history's order.
	Forwarded bool `json:"forwarded"`
	// Journaled is true when the provider's own journal (WireMock's request
	// journal) recorded the request: its key fields were then checked
	// against, and taken from, what crossed the network.
	Journaled      bool      `json:"journaled,omitempty"`
	ArrivalSeq     int       `json:"arrival_seq,omitempty"`
	ArrivedAt      time.Time `json:"arrived_at,omitzero"`
	ProviderDone   bool      `json:"provider_done"`
	ProviderSeq    int       `json:"provider_seq,omitempty"`
	ProviderDoneAt time.Time `json:"provider_done_at,omitzero"`
	// ProviderStatus, ProviderChargeID and ProviderBodyDigest are the
	// provider's answer, whether or not it reached the client.
	ProviderStatus     int    `json:"provider_status,omitempty"`
	ProviderChargeID   string `json:"provider_charge_id,omitempty"`
	ProviderBodyDigest string `json:"provider_body_digest,omitempty"`
	// ProviderHeaders are the answer's headers that carry meaning
	// (Location, Content-Type, Retry-After, the replay header).
	ProviderHeaders ResponseHeaders `json:"provider_headers,omitzero"`
	// ProviderForeign is true when the provider's answer is not of the
	// dialect (OfDialect): a verdict drawn only from such answers is none.
	ProviderForeign bool `json:"provider_not_dialect,omitempty"`
	// Done is true once the client got a response or an error; Status is
	// the status it got (0 with Err), Replayed the Idempotent-Replayed header.
	Done     bool      `json:"done"`
	DoneAt   time.Time `json:"done_at,omitzero"`
	Status   int       `json:"status,omitempty"`
	Err      string    `json:"err,omitempty"`
	Replayed bool      `json:"replayed,omitempty"`
	ChargeID string    `json:"charge_id,omitempty"`

	// RefundCharge is the charge a refund request names (IsRefund), so a
	// report can rebuild its body.
	RefundCharge string `json:"refund_charge,omitempty"`

	// Dialect is the API the request was sent in: "" for
	// docs/provider-api.md (a JSON body, a quoted key), DialectStripe for
	// Stripe's (a form body, an opaque bare key). Form is then the body
	// as the client sent it (application/x-www-form-urlencoded), with a
	// card that is not a public test card replaced by CardPlaceholder, so
	// that a report replays the very request.
	Dialect string `json:"dialect,omitempty"`
	Form    string `json:"form,omitempty"`
}

// DialectStripe is Stripe's API as idemcheck speaks and serves it
// (sut/stripewire): form bodies, opaque bare keys of at most 255
// characters, Stripe's error JSON.
const DialectStripe = "stripe"

// CardPlaceholder stands for a card token in a recorded form body
// (Exchange.Form) that is not a public test card: a report asks for it
// as ${IDEMCHECK_CARD_TOKEN}.
const CardPlaceholder = "IDEMCHECK_CARD_TOKEN"

// IsPost reports whether e is a create-charge request: a POST that is not
// to the refunds resource (IsRefund).
func (e Exchange) IsPost() bool { return e.Method == "POST" && !e.IsRefund() }

// Unknown reports whether the client cannot tell from e whether the
// provider charged: a transport error or timeout, a 409, or a 500/502/504
// (docs/provider-api.md, "What unknown outcome means"). 429 and 503 are
// transient: the reference dialect documents that nothing was charged.
func (e Exchange) Unknown() bool {
	if !e.Done {
		return false
	}
	if e.Err != "" {
		return true
	}
	switch e.Status {
	case 409, 500, 502, 504:
		return true
	}
	return false
}

// Snapshot is a copy of a History at one moment, safe to read freely.
type Snapshot struct {
	Steps     []Step      `json:"steps"`
	Ops       []Operation `json:"operations"`
	Exchanges []Exchange  `json:"exchanges"`
	// Delta, in a snapshot History.Sync keeps up to date, is what changed
	// since the Sync before; nil in a copy (History.Snapshot, Clone).
	Delta *Delta `json:"-"`
}

// History records one run: its steps, operations and wire exchanges, each
// numbered in one total order. It is safe for concurrent use.
type History struct {
	mu        sync.Mutex // guards all fields below
	seq       int
	steps     []Step
	ops       []Operation
	exchanges []Exchange
	// changes lists every EndOp and UpdateExchange, in order: what Sync
	// copies again into a snapshot that already holds the element.
	changes []change
}

// NewHistory returns an empty history.
func NewHistory() *History {
	// Room for a 30-step sequence's records (30 steps, ~20 operations, ~11
	// exchanges), so that they are not copied as they grow (issue 29).
	return &History{steps: make([]Step, 0, 32), ops: make([]Operation, 0, 32), exchanges: make([]Exchange, 0, 16)}
}

// BeginStep records the start of step n of the drawn sequence.
func (h *History) BeginStep(action, args string, at time.Time) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	n := len(h.steps) + 1
	h.steps = append(h.steps, Step{N: n, Action: action, Args: args, At: at})
	return n
}

// CurrentStep is the number of the last step begun, 0 before the first.
func (h *History) CurrentStep() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.steps)
}

// BeginOp records an invoked operation and returns its id. op.ID and
// op.Step are set here.
func (h *History) BeginOp(op Operation) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	op.ID = len(h.ops) + 1
	op.Step = len(h.steps)
	h.ops = append(h.ops, op)
	return op.ID
}

// EndOp updates operation id (typically its result); an unknown id is ignored.
func (h *History) EndOp(id int, f func(*Operation)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	if id >= 1 && id <= len(h.ops) {
		f(&h.ops[id-1])
		h.changes = append(h.changes, change{op: true, i: id - 1})
	}
}

// BeginExchange records a request leaving the client and returns its id.
// ex.ID and ex.Seq are set here.
func (h *History) BeginExchange(ex Exchange) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	ex.ID = len(h.exchanges) + 1
	ex.Seq = h.seq
	h.exchanges = append(h.exchanges, ex)
	return ex.ID
}

// UpdateExchange changes exchange id; f receives the next sequence number,
// for marking an event (such as the provider's completion) in the order.
func (h *History) UpdateExchange(id int, f func(ex *Exchange, seq int)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	if id >= 1 && id <= len(h.exchanges) {
		f(&h.exchanges[id-1], h.seq)
		h.changes = append(h.changes, change{i: id - 1})
	}
}

// Snapshot copies the history.
func (h *History) Snapshot() Snapshot {
	h.mu.Lock()
	defer h.mu.Unlock()
	return Snapshot{
		Steps:     append([]Step(nil), h.steps...),
		Ops:       append([]Operation(nil), h.ops...),
		Exchanges: append([]Exchange(nil), h.exchanges...),
	}
}

type opKey struct{}

// WithOp tags ctx with the operation id that the requests made under it
// belong to; the fault layer reads it back with OpFrom.
func WithOp(ctx context.Context, opID int) context.Context {
	return context.WithValue(ctx, opKey{}, opID)
}

// OpFrom returns the operation id WithOp stored in ctx, or 0.
func OpFrom(ctx context.Context) int {
	id, _ := ctx.Value(opKey{}).(int)
	return id
}

// ProviderEvent is one decision of the provider as a history ordered it:
// the arrival of an exchange (Arrival true), or the completion of its answer.
type ProviderEvent struct {
	Seq     int
	Arrival bool
	Ex      *Exchange // in the slice the events were listed from
}

// ProviderEvents lists the arrivals and completions of the exchanges in exs
// that reached the provider, in the history's order: the order in which a
// specification such as Spec must replay them.
func ProviderEvents(exs []Exchange) []ProviderEvent {
	evs := make([]ProviderEvent, 0, 2*len(exs))
	for i := range exs {
		e := &exs[i]
		if !e.Forwarded || e.ArrivalSeq == 0 {
			continue
		}
		evs = append(evs, ProviderEvent{Seq: e.ArrivalSeq, Arrival: true, Ex: e})
		if e.ProviderDone {
			evs = append(evs, ProviderEvent{Seq: e.ProviderSeq, Ex: e})
		}
	}
	sort.Slice(evs, func(i, j int) bool { return evs[i].Seq < evs[j].Seq })
	return evs
}
