// Package stripecheckout is a checkout built on Stripe's Go SDK
// (github.com/stripe/stripe-go/v82), as a team writes one, certified with
// conformance.CheckClient against the embedded provider speaking Stripe's
// API (conformance.WithDialect("stripe")). The only lines that are the
// harness's are in New: the SDK's base URL, HTTP client and secret key
// come from checkout.Env; nothing else changes between this checkout in
// production and under the harness.
//
// It comes in two variants:
//
//   - Correct: one payment intent per attempt, its Idempotency-Key chosen
//     by the checkout and stored before the first send (Stripe: "we
//     suggest using V4 UUIDs, or another random string with enough
//     entropy", https://docs.stripe.com/api/idempotent_requests), resent
//     on the shopper's next click; every error but a card decline is an
//     unknown outcome (the SDK shows only its last try's error, and a
//     409, a timeout or a 5xx may hide a charge), answered
//     PaymentPending and settled by a reconciliation that searches the
//     intent's charges by metadata['merchant_reference']
//     (https://docs.stripe.com/search).
//   - Naive: what the SDK does by default: the SDK picks a fresh key for
//     every call (stripe.NewIdempotencyKey), one call per click, and an
//     error is read as final ("Failed"). A double click is two intents,
//     two keys and two charges.
//   - Careful: the correct variant, except that a 400, 429 or 503 is read
//     as "nothing was charged" (Failed, the intent given up). Each is
//     final for the one request it answers, but the SDK retries a
//     connection error under the same key and shows only its last try's
//     error: a reset that hid a charge, then a 503, is a charge the
//     shopper is told failed.
package stripecheckout

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/stripe/stripe-go/v82"

	"github.com/idemcheck/idemcheck/checkout"
	"github.com/idemcheck/idemcheck/models"
)

// The variants of New.
const (
	Correct = "correct"
	Naive   = "naive"
	Careful = "careful"
)

// Timings are the checkout's own: a checkout call (the SDK's tries
// included) is bounded by CallTimeout; reconciliation looks at an intent
// open for MinAge since its last send, and gives it up after AbandonAfter
// without a charge. conformance.Timings takes them.
const (
	CallTimeout  = 10 * time.Second
	MinAge       = 2 * time.Minute
	AbandonAfter = 30 * time.Minute
)

// New is the checkout of variant (Correct, Naive or Careful) on stripe-go, its SDK
// pointed at env: the harness's provider, HTTP client (its fault layer)
// and secret key. It implements checkout.Client; the Correct variant also
// checkout.Viewer and checkout.Restarter.
func New(variant string, env checkout.Env) (checkout.Client, error) {
	sc := stripe.NewClient(env.APIKey, stripe.WithBackends(stripe.NewBackendsWithConfig(&stripe.BackendConfig{
		URL:        stripe.String(env.BaseURL), // the harness's: here is all that changes
		HTTPClient: env.HTTPClient,
		// Quiet: the harness's faults make the SDK log an error per
		// failed request.
		LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull},
	})))
	switch variant {
	case Naive:
		return naive{sc: sc}, nil
	case Correct, Careful:
		s := &shop{sc: sc, careful: variant == Careful, now: env.Now, newKey: env.NewKey, orders: map[int64]*models.Order{}, cards: map[uuid.UUID]string{}}
		s.life, s.die = context.WithCancel(context.Background())
		return s, nil
	}
	return nil, fmt.Errorf("stripecheckout: unknown variant %q", variant)
}

// intent is the PaymentIntent a checkout confirms for reference.
func intent(amount int64, currency, card, reference string, order int64) *stripe.PaymentIntentCreateParams {
	return &stripe.PaymentIntentCreateParams{
		Amount: stripe.Int64(amount), Currency: stripe.String(strings.ToLower(currency)),
		PaymentMethod: stripe.String(card), Confirm: stripe.Bool(true),
		Description: stripe.String(fmt.Sprintf("Bookstore order %d", order)),
		Metadata:    map[string]string{"merchant_reference": reference},
	}
}

// naive is the SDK as it comes: a fresh key per call (the SDK's), one
// call per click, every error final.
type naive struct{ sc *stripe.Client }

func (n naive) Checkout(ctx context.Context, o checkout.Order, card string) checkout.Result {
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	pi, err := n.sc.V1PaymentIntents.Create(ctx, intent(o.Amount, o.Currency, card, models.AttemptReference(o.ID, uuid.New()), o.ID))
	var se *stripe.Error
	switch {
	case err == nil && pi.Status == stripe.PaymentIntentStatusSucceeded:
		return checkout.Result{Outcome: checkout.Paid, ChargeID: chargeOf(pi)}
	case errors.As(err, &se) && se.Type == stripe.ErrorTypeCard:
		return checkout.Result{Outcome: checkout.Declined}
	}
	return checkout.Result{Outcome: checkout.Failed}
}

func (naive) Reconcile(context.Context) (string, error) { return "nothing to reconcile", nil }

// chargeOf is the charge a confirmed intent made.
func chargeOf(pi *stripe.PaymentIntent) string {
	if pi.LatestCharge != nil {
		return pi.LatestCharge.ID
	}
	return ""
}

// shop is the correct checkout. Its "durable store" is the struct
// itself; Restart starts a new process over it. It is safe for
// concurrent use, and holds no lock across a call to Stripe.
type shop struct {
	sc      *stripe.Client
	careful bool // the Careful variant: a 400, 429 or 503 is final
	now     func() time.Time
	newKey  func() string

	mu       sync.Mutex // guards everything below
	orders   map[int64]*models.Order
	attempts []*models.PaymentAttempt
	cards    map[uuid.UUID]string // each attempt's card (test tokens only)
	epoch    int                  // the process now running; writes of an older one are dropped
	life     context.Context      // the process's lifetime, cancelled by Restart
	die      context.CancelFunc
}

// Checkout implements checkout.Client.
func (s *shop) Checkout(ctx context.Context, o checkout.Order, card string) checkout.Result {
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
	case a != nil && s.cards[a.ID] != card:
		s.mu.Unlock()
		// Another card's payment is still being verified: its key is
		// never resent with another body.
		return checkout.Result{Outcome: checkout.Pending, Status: http.StatusConflict}
	case a != nil && s.now().Sub(a.CreatedAt) >= 23*time.Hour:
		s.mu.Unlock()
		// Near Stripe's 24 h key window: never resent; reconciliation decides.
		return checkout.Result{Outcome: checkout.Pending}
	case a == nil:
		// The key is the checkout's, stored before the first send.
		a = &models.PaymentAttempt{ID: uuid.MustParse(s.newKey()), OrderID: o.ID, IdempotencyKey: s.newKey(),
			Amount: o.Amount, Currency: o.Currency, CardTokenHash: models.CardHash(card), CreatedAt: s.now(), Status: models.AttemptOpen}
		s.attempts = append(s.attempts, a)
		s.cards[a.ID] = card
		order.Status = models.OrderPaymentPending
	}
	a.LastSentAt = s.now()
	params := intent(a.Amount, a.Currency, card, a.Reference(), o.ID)
	params.SetIdempotencyKey(a.IdempotencyKey) // the SDK's own tries resend it too
	s.mu.Unlock()

	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	defer context.AfterFunc(life, cancel)() // a crash abandons the call
	pi, err := s.sc.V1PaymentIntents.Create(ctx, params)

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.epoch != epoch {
		return checkout.Result{Outcome: checkout.Failed} // crashed meanwhile: nothing reaches the store
	}
	var se *stripe.Error
	switch {
	case err == nil && pi.Status == stripe.PaymentIntentStatusSucceeded:
		s.settle(a, chargeOf(pi))
		return checkout.Result{Outcome: checkout.Paid, ChargeID: chargeOf(pi), AttemptID: a.ID.String()}
	case errors.As(err, &se) && se.Type == stripe.ErrorTypeCard && se.HTTPStatusCode == http.StatusPaymentRequired:
		if a.Status == models.AttemptOpen {
			a.Status = models.AttemptDeclined
		}
		if s.openAttempt(o.ID) == nil {
			order.Status = models.OrderPlaced
		}
		return checkout.Result{Outcome: checkout.Declined, AttemptID: a.ID.String()}
	}
	if s.careful && errors.As(err, &se) && (se.HTTPStatusCode == http.StatusBadRequest ||
		se.HTTPStatusCode == http.StatusTooManyRequests || se.HTTPStatusCode == http.StatusServiceUnavailable) {
		if a.Status == models.AttemptOpen {
			a.Status, order.Status = models.AttemptAbandoned, models.OrderPlaced
		}
		return checkout.Result{Outcome: checkout.Failed, AttemptID: a.ID.String()}
	}
	// Anything else may hide a charge: the attempt stays open.
	return checkout.Result{Outcome: checkout.Pending, AttemptID: a.ID.String()}
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

// Reconcile implements checkout.Client: every intent Open for MinAge
// since its last send is searched by its merchant reference; a succeeded
// one settles it; none after AbandonAfter abandons it — unless it was
// resent while Stripe was asked.
func (s *shop) Reconcile(ctx context.Context) (string, error) {
	s.mu.Lock()
	var due []models.PaymentAttempt
	for _, a := range s.attempts {
		if a.Status == models.AttemptOpen && s.now().Sub(a.LastSentAt) >= MinAge {
			due = append(due, *a)
		}
	}
	s.mu.Unlock()
	settled := 0
	for _, seen := range due {
		charge, err := s.find(ctx, seen.Reference())
		if err != nil {
			continue // not known: asked again next time
		}
		s.mu.Lock()
		for _, a := range s.attempts {
			if a.ID != seen.ID || a.Status != models.AttemptOpen {
				continue
			}
			switch {
			case charge != "":
				s.settle(a, charge)
				settled++
			case a.LastSentAt.Equal(seen.LastSentAt) && s.now().Sub(a.LastSentAt) >= AbandonAfter:
				a.Status, s.orders[a.OrderID].Status = models.AttemptAbandoned, models.OrderPlaced
				settled++
			}
		}
		s.mu.Unlock()
	}
	return fmt.Sprintf("%d due, %d settled", len(due), settled), nil
}

// find is the charge of reference's succeeded PaymentIntent, "" for none,
// by Stripe's search (https://docs.stripe.com/search).
func (s *shop) find(ctx context.Context, reference string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	params := &stripe.PaymentIntentSearchParams{SearchParams: stripe.SearchParams{
		Query: "metadata['merchant_reference']:'" + reference + "'", Limit: stripe.Int64(10)}}
	for pi, err := range s.sc.V1PaymentIntents.Search(ctx, params) {
		if err != nil {
			return "", err
		}
		if pi.Status == stripe.PaymentIntentStatusSucceeded {
			return chargeOf(pi), nil
		}
	}
	return "", nil
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
