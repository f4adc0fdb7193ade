package machine

import (
	"context"
	"fmt"
	"sync"

	"github.com/idemcheck/idemcheck/checkout"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/client"
	"pgregory.net/rapid"
)

// refClient is the reference client (sut/client) as a checkout.Client,
// with every capability: the state machine drives it through the same
// interface as a client under test. One refClient is one instance
// (Config.Instances); Restart replaces its process by a new one over the
// same store.
type refClient struct {
	w *World
	i int // the instance

	mu  sync.Mutex // guards cli
	cli *client.Client
}

var (
	_ checkout.Restarter = (*refClient)(nil)
	_ checkout.Callback  = (*refClient)(nil)
	_ checkout.Viewer    = (*refClient)(nil)
	_ checkout.Placer    = (*refClient)(nil)
)

// process is the client process now serving the instance.
func (r *refClient) process() *client.Client {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cli
}

// Checkout implements checkout.Client.
func (r *refClient) Checkout(ctx context.Context, o checkout.Order, token string) checkout.Result {
	return result(r.process().Checkout(ctx, o.ID, token))
}

// PaymentReady implements checkout.Callback.
func (r *refClient) PaymentReady(ctx context.Context, o checkout.Order, token string) checkout.Result {
	return result(r.process().PaymentReady(ctx, o.ID, token))
}

// Reconcile implements checkout.Client.
func (r *refClient) Reconcile(ctx context.Context) (string, error) {
	rep := r.process().RunReconciliation(ctx, r.w.clock.Now())
	return fmt.Sprintf("checked %d, succeeded %d, abandoned %d, still open %d, errors %d",
		rep.Checked, rep.Succeeded, rep.Abandoned, rep.StillOpen, rep.Errors), nil
}

// PlaceOrder implements checkout.Placer: ids are the store's.
func (r *refClient) PlaceOrder(_ context.Context, total int64, currency string) (int64, error) {
	return r.process().OpenOrder(total, currency).ID, nil
}

// View implements checkout.Viewer: the store's orders and attempts.
func (r *refClient) View(ctx context.Context) (checkout.View, error) {
	orders, attempts, err := r.w.store.Snapshot(ctx)
	v := checkout.View{Orders: orders, Attempts: attempts}
	if rs, ok := r.w.store.(client.RefundStore); ok && err == nil {
		v.Refunds, err = rs.Refunds(ctx)
	}
	return v, err
}

// crash kills the process without starting another (a crash point).
func (r *refClient) crash() { r.process().Crash() }

// Restart implements checkout.Restarter: the old process is fenced off the
// store and a new one opens it, keeping every stored attempt.
func (r *refClient) Restart(context.Context) error {
	r.crash()
	c := r.w.openProcess(r.i)
	r.mu.Lock()
	r.cli = c
	r.mu.Unlock()
	return nil
}

// result is the shopper's view of a reference checkout: its 409 (a
// previous payment being verified) is pending, its 503 and 500 failed.
func result(res client.CheckoutResult) checkout.Result {
	out := checkout.Result{Status: res.HTTPStatus, ChargeID: res.ChargeID, AttemptID: res.AttemptID}
	switch res.Outcome {
	case client.OutcomePaid:
		out.Outcome = checkout.Paid
	case client.OutcomePaymentPending, client.OutcomePreviousPaymentBeingVerified:
		out.Outcome = checkout.Pending
	case client.OutcomeDeclined:
		out.Outcome = checkout.Declined
	default:
		out.Outcome = checkout.Failed
	}
	return out
}

// orderState is the order's state as the client reports it, or, for a
// client without a view, Paid once a checkout answered Paid and Placed
// otherwise.
func (w *World) orderState(id int64) models.Order {
	if v, ok := w.view(); ok {
		return orderIn(v.Orders, id)
	}
	return w.orderWithoutView(id)
}

// eachOrderState calls f with the index in w.orders and the orderState
// of every order the sequence opened, from one reading of the client's
// view where it has one (issue 29: a step that picks an order read the
// whole view once per order).
func (w *World) eachOrderState(f func(i int, s models.Order)) {
	v, ok := w.view()
	for i, o := range w.orders {
		if ok {
			f(i, orderIn(v.Orders, o.ID))
		} else {
			f(i, w.orderWithoutView(o.ID))
		}
	}
}

// orderIn is the order id of a client's view, the zero Order when it
// has none.
func orderIn(orders []models.Order, id int64) models.Order {
	for _, o := range orders {
		if o.ID == id {
			return o
		}
	}
	return models.Order{}
}

// orderWithoutView is orderState of a client without a view: what its
// orderReader says, else Paid once a checkout answered Paid.
func (w *World) orderWithoutView(id int64) models.Order {
	if r, ok := w.cli.(orderReader); ok {
		if o, err := r.Order(context.Background(), id); err == nil {
			return o
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.paid[id] {
		return models.Order{ID: id, Status: models.OrderPaid}
	}
	return models.Order{ID: id, Status: models.OrderPlaced}
}

// view is the client's own view and whether it has one (a client without
// checkout.Viewer, or one whose view could not be read: the next snapshot
// reports the error).
func (w *World) view() (checkout.View, bool) {
	v, ok := w.cli.(checkout.Viewer)
	if !ok {
		return checkout.View{}, false
	}
	got, err := v.View(context.Background())
	return got, err == nil
}

// needRestart skips a crash action for a client that cannot restart.
func (m *Machine) needRestart(t *rapid.T) {
	if _, ok := m.w.cli.(checkout.Restarter); !ok {
		t.Skip("the client under test cannot crash and restart (checkout.Restarter)")
	}
}
