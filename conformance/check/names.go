package check

import (
	"fmt"

	"github.com/idemcheck/idemcheck/models"
)

// names gives payment intents the stable, human names failure messages
// use — "order 1 intent 2" — instead of keys or UUIDs, which differ between
// runs. Intents are numbered per order in the order the client created
// them, then in the order unknown references first appear on the wire.
// The names are built from the whole World on the first call of of, which
// only a violation makes: a check that holds costs nothing here.
type names struct {
	// What build reads of the World, not a copy of all of it: names are
	// made at every step's checks and built only on a violation (issue 29).
	attempts  []models.PaymentAttempt
	exchanges []models.Exchange
	charges   []models.Charge
	built     bool
	byRef     map[string]string
	next      map[int64]int
}

func newNames(w World) *names {
	m := w.m()
	if m.names == nil {
		m.names = &names{attempts: w.Attempts, exchanges: w.History.Exchanges, charges: w.Charges}
	}
	return m.names
}

func (n *names) build() {
	n.built = true
	n.byRef, n.next = map[string]string{}, map[int64]int{}
	for _, a := range n.attempts {
		n.add(a.Reference())
	}
	for _, e := range n.exchanges {
		if e.MerchantReference != "" {
			n.add(e.MerchantReference)
		}
	}
	for _, c := range n.charges {
		n.add(c.MerchantReference)
	}
}

func (n *names) add(ref string) {
	if _, ok := n.byRef[ref]; ok {
		return
	}
	order, _, ok := models.ParseReference(ref)
	if !ok {
		n.byRef[ref] = fmt.Sprintf("reference %q", ref)
		return
	}
	n.next[order]++
	n.byRef[ref] = fmt.Sprintf("order %d intent %d", order, n.next[order])
}

// IntentName is how failure messages over w name the payment intent behind
// merchant reference ref: "order 1 intent 2", numbered per order in the
// order the client created them, then as unknown references first appear on
// the wire; `reference "x"` for a reference that names no order.
func IntentName(w World, ref string) string { return newNames(w).of(ref) }

// of names the intent behind a merchant reference.
func (n *names) of(ref string) string {
	if !n.built {
		n.build()
	}
	if s, ok := n.byRef[ref]; ok {
		return s
	}
	return fmt.Sprintf("reference %q", ref)
}

// orderOf is the order id in a merchant reference, or -1.
func orderOf(ref string) int64 {
	id, _, ok := models.ParseReference(ref)
	if !ok {
		return -1
	}
	return id
}

// postsOf returns the create-charge exchanges of w's history, in order.
func postsOf(w World) []models.Exchange {
	m := w.m()
	if !m.done[0] {
		m.posts, m.done[0] = Posts(w.History), true
	}
	return m.posts
}

// clientPostsOf returns the create-charge exchanges the client sent.
func clientPostsOf(w World) []models.Exchange {
	m := w.m()
	if !m.done[1] {
		m.clientPosts, m.done[1] = clientPosts(w.History, postsOf(w)), true
	}
	return m.clientPosts
}

// Posts returns the create-charge exchanges of h in order, without the
// probes of a request shape or of another account (probe_shapes.go): those
// equivalent-requests-agree and key-scoped-per-account judge.
func Posts(h models.Snapshot) []models.Exchange {
	n := 0
	for i := range h.Exchanges {
		if h.Exchanges[i].IsPost() {
			n++
		}
	}
	out := make([]models.Exchange, 0, n) // one allocation: an exchange is ~600 bytes
	for _, e := range h.Exchanges {
		if e.IsPost() && ProbeKind(h, e) == "" {
			out = append(out, e)
		}
	}
	if len(out) == 0 {
		return nil // as before: no create, no slice
	}
	return out
}

// clientPosts returns the create-charge exchanges the client sent: posts
// (Posts of h) without the harness's own probes, which the client
// invariants must not judge.
func clientPosts(h models.Snapshot, posts []models.Exchange) []models.Exchange {
	probe := map[int]bool{}
	for _, op := range h.Ops {
		if op.Kind == models.OpProbe {
			probe[op.ID] = true
		}
	}
	out := make([]models.Exchange, 0, len(posts))
	for _, e := range posts {
		if !probe[e.OpID] {
			out = append(out, e)
		}
	}
	return out
}

// sawStatus is what the client saw of e, for messages: "409", "timeout".
func sawStatus(e models.Exchange) string {
	if e.Err != "" {
		return e.Err
	}
	if !e.Done {
		return "no answer yet"
	}
	return fmt.Sprint(e.Status)
}

func itoa(i int) string { return fmt.Sprint(i) }
