package machine

import (
	"slices"

	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/backend"
	"github.com/idemcheck/idemcheck/sut/client"
)

// stateView is the World's own copy of the reference client's in-memory
// store, kept from the store's change log (client.Store.ChangesFrom)
// after every step, with a check.StateDelta saying what the step changed
// in it and in the embedded provider's ledger: the Checker then compares
// only those elements, where it would compare every order, attempt and
// charge. Its slices are overwritten in place at the next step, like the
// synced history (StepSnapshot): Clone what must outlive it (Machine.fail).
type stateView struct {
	pos      int    // the store's change log, read up to here
	gen      uint64 // the StateDelta.Gen of the last World handed over
	orders   []models.Order
	orderAt  map[int64]int // order id → index in orders
	attempts []models.PaymentAttempt
	intents  []models.RefundIntent
	charges  int // Charges handed over last, when the ledger only appends
	refunds  int // Refunds handed over last, likewise
	delta    check.StateDelta
}

// followsStore reports whether the step's state can be read from the
// store's change log: the client under test is the reference client over
// the in-memory store (any other client's view is read whole).
func (w *World) followsStore() (*client.Store, bool) {
	if _, ok := w.cli.(*refClient); !ok || len(w.extra) > 0 {
		return nil, false
	}
	st, ok := w.store.(*client.Store)
	return st, ok
}

// follow brings v up to date with st and sets into cw the orders,
// attempts and refund intents, and cw.State: what changed since the World
// v handed over before. cw.Charges come from a ledger that only appends
// when appendOnly.
func (v *stateView) follow(st *client.Store, cw *check.World, appendOnly bool) {
	ch, next := st.ChangesFrom(v.pos)
	whole := v.pos == 0
	if whole {
		*v = stateView{gen: v.gen, orderAt: map[int64]int{}, delta: v.delta}
	}
	d := &v.delta
	d.Follows, d.Orders, d.Attempts, d.RefundIntents = v.gen, d.Orders[:0], d.Attempts[:0], d.RefundIntents[:0]
	v.pos = next
	for _, o := range ch.Orders {
		if i, ok := v.orderAt[o.ID]; ok {
			v.orders[i] = o
			d.Orders = append(d.Orders, i)
			continue
		}
		if n := len(v.orders); n > 0 && v.orders[n-1].ID > o.ID && !whole {
			// a new order numbered below an earlier one: not the store's
			// numbering (ids only grow); read the store whole
			v.pos = 0
			v.follow(st, cw, appendOnly)
			cw.State = nil
			return
		}
		v.orderAt[o.ID] = len(v.orders)
		v.orders = append(v.orders, o)
	}
	slices.Sort(d.Orders)
	d.Attempts = patch(&v.attempts, ch.AttemptAt, ch.Attempts, d.Attempts)
	d.RefundIntents = patch(&v.intents, ch.IntentAt, ch.Intents, d.RefundIntents)
	d.Charges, d.Refunds = 0, 0
	if appendOnly && !whole {
		d.Charges, d.Refunds = min(v.charges, len(cw.Charges)), min(v.refunds, len(cw.Refunds))
	}
	v.charges, v.refunds = len(cw.Charges), len(cw.Refunds)
	v.gen++
	d.Gen = v.gen
	cw.Orders, cw.Attempts, cw.RefundIntents = v.orders, v.attempts, v.intents
	cw.State = d
	if whole {
		d.Follows = 0 // nothing to follow: the Checker compares every element
	}
}

// patch sets (*list)[at[k]] to vals[k] for each k, appending where at[k]
// is the list's length (at is ascending: new elements come in order), and
// returns changed with the indices below the list's old length.
func patch[T any](list *[]T, at []int, vals []T, changed []int) []int {
	n := len(*list)
	for k, i := range at {
		switch {
		case i < n:
			(*list)[i] = vals[k]
			changed = append(changed, i)
		case i == len(*list):
			*list = append(*list, vals[k])
		}
	}
	return changed
}

// appendOnlyLedger reports whether the provider's Charges and Refunds
// only grow, an earlier one never changing (backend.AppendOnly).
func appendOnlyLedger(p backend.Backend) bool {
	_, ok := p.(backend.AppendOnly)
	return ok
}
