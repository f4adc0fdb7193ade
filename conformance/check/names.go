package check

import (
	"fmt"

	"github.com/idemcheck/idemcheck/models"
)

// names gives payment intents the stable, human names failure messages
// use — "order 1 intent 2" — instead of keys or UUIDs, which differ between
// runs. Intents are numbered per order in the order the client created
// them, then in the order unknown references first appear on the wire.
type names struct {
	byRef map[string]string
	next  map[int64]int
}

func newNames(w World) *names {
	m := w.m()
	if m.done[0] {
		return m.names
	}
	m.names, m.done[0] = buildNames(w), true
	return m.names
}

func buildNames(w World) *names {
	n := &names{byRef: map[string]string{}, next: map[int64]int{}}
	for _, a := range w.Attempts {
		n.add(a.Reference())
	}
	for _, e := range w.History.Exchanges {
		if e.MerchantReference != "" {
			n.add(e.MerchantReference)
		}
	}
	for _, c := range w.Charges {
		n.add(c.MerchantReference)
	}
	return n
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
	if !m.done[1] {
		m.posts, m.done[1] = Posts(w.History), true
	}
	return m.posts
}

// clientPostsOf returns the create-charge exchanges the client sent.
func clientPostsOf(w World) []models.Exchange {
	m := w.m()
	if !m.done[2] {
		m.clientPosts, m.done[2] = clientPosts(w.History), true
	}
	return m.clientPosts
}

// Posts returns the create-charge exchanges of h in order, without the
// probes of a request shape or of another account (probe_shapes.go): those
// equivalent-requests-agree and key-scoped-per-account judge.
func Posts(h models.Snapshot) []models.Exchange {
	var out []models.Exchange
	for _, e := range h.Exchanges {
		if e.IsPost() && ProbeKind(h, e) == "" {
			out = append(out, e)
		}
	}
	return out
}

// clientPosts returns the create-charge exchanges the client sent: posts
// without the harness's own probes, which the client invariants must not judge.
func clientPosts(h models.Snapshot) []models.Exchange {
	probe := map[int]bool{}
	for _, op := range h.Ops {
		if op.Kind == models.OpProbe {
			probe[op.ID] = true
		}
	}
	var out []models.Exchange
	for _, e := range Posts(h) {
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
