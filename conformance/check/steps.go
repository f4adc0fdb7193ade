package check

import "github.com/idemcheck/idemcheck/models"

// The Checker's incremental forms of the invariants whose state is a
// group of the history: the creates of one call and intent
// (no-unsafe-retry), of one operation (409-never-final), under one key
// (equivalent-requests-agree, key-scoped-per-account,
// key-scoped-per-endpoint). Each rejudges only the groups of the
// exchanges and operations the step added or changed (Checker.touched,
// from the history's models.Delta); a group that now fails sends the
// invariant to its whole form (Check), which names the first violation
// exactly as Evaluate does. A group no step touched holds as it did.

// callIntent is no-unsafe-retry's group: one client call and intent.
type callIntent struct {
	op  int
	ref string
}

// keyFP is equivalent-requests-agree's group: one key and one body.
type keyFP struct{ key, fp string }

// groups are the Checker's indices of the history by group, in the
// history's order.
type groups struct {
	byCall map[callIntent][]int // the client's creates
	byOp   map[int][]int        // the client's creates, by operation id
	byKey  map[string][]int     // every create and refund, probes too
	bKeys  map[string]bool      // keys merchant B sent (ProbeOtherAccount)

	seen402   map[string]bool // references a client's create got a 402 for
	bAnswered map[string]bool // charge ids answered to merchant B
	open      map[int64]int   // scratch of conflictState
	ops       []int           // scratch: operations to rejudge
	lastOther ledger          // merchant B's ledger at the last step
}

// file adds exchange i of h to the groups (Checker.index).
func (g *groups) file(h models.Snapshot, i int, client, other bool) {
	g.init()
	e := &h.Exchanges[i]
	g.byKey[e.Key] = append(g.byKey[e.Key], i)
	if client {
		ci := callIntent{e.OpID, e.MerchantReference}
		g.byCall[ci] = append(g.byCall[ci], i)
		g.byOp[e.OpID] = append(g.byOp[e.OpID], i)
	}
	if other {
		g.bKeys[e.Key] = true
	}
}

// init makes the groups' maps, once.
func (g *groups) init() { g.initSized(0) }

// initSized makes the groups' maps, once, with room for n exchanges.
func (g *groups) initSized(n int) {
	if g.byKey == nil {
		g.byCall, g.byOp, g.byKey, g.bKeys = make(map[callIntent][]int, n), make(map[int][]int, n), make(map[string][]int, n), map[string]bool{}
		g.seen402, g.bAnswered, g.open = map[string]bool{}, map[string]bool{}, map[int64]int{}
	}
}

func (c *Checker) stepNoUnsafeRetry(w World) Finding {
	exs := w.History.Exchanges
	for _, i := range c.touched {
		if e := &exs[i]; c.isClientPost(w, i) && callRetried(exs, c.g.byCall[callIntent{e.OpID, e.MerchantReference}]) {
			return checkNoUnsafeRetry(w)
		}
	}
	return Finding{}
}

// callRetried is checkNoUnsafeRetry over one call and intent's creates.
func callRetried(exs []models.Exchange, group []int) bool {
	refused, keyless := false, 0
	for _, j := range group {
		e := &exs[j]
		if refused && e.OpID != 0 {
			return true
		}
		if !e.HasKey {
			if keyless++; keyless > 1 && e.OpID != 0 {
				return true
			}
		}
		if e.Done && (e.Status == 400 || e.Status == 422) {
			refused = true
		}
	}
	return false
}

func (c *Checker) stepConflictNeverFinal(w World) Finding {
	exs, ops := w.History.Exchanges, w.History.Ops
	c.g.ops = append(c.g.ops[:0], c.touchedOps...)
	for _, i := range c.touched {
		if e := &exs[i]; c.isClientPost(w, i) {
			c.g.ops = append(c.g.ops, e.OpID-1)
			if e.Status == 402 {
				c.g.seen402[e.MerchantReference] = true
			}
		}
	}
	var n *names
	var buf []models.Exchange
	for _, k := range c.g.ops {
		if k < 0 || k >= len(ops) {
			continue
		}
		buf = buf[:0]
		for _, j := range c.g.byOp[ops[k].ID] {
			buf = append(buf, exs[j])
		}
		if len(buf) == 0 {
			continue
		}
		if n == nil {
			n = newNames(w)
		}
		if f := conflictOp(n, ops[k], buf); !f.Holds() {
			return checkConflictNeverFinal(w)
		}
	}
	if c.st.whole || !c.st.conflictStateHolds(c.g.seen402) {
		return conflictState(w, newNames(w), c.g.seen402, c.g.open)
	}
	return Finding{}
}

func (c *Checker) stepEquivalentRequests(w World) Finding {
	exs := w.History.Exchanges
	for _, i := range c.touched {
		e := &exs[i]
		if e.IsPost() && e.HasKey && !shapeGroupHolds(w, c.g.byKey[e.Key], e.Fingerprint) {
			return checkEquivalentRequests(w)
		}
	}
	return Finding{}
}

// shapeGroupHolds is eachJudgedShape with checkEquivalentRequests's
// judgement over the creates under one key (group) with fingerprint fp.
func shapeGroupHolds(w World, group []int, fp string) bool {
	exs := w.History.Exchanges
	var f *models.Exchange
	replayed, unsteady := 0, false
	for _, j := range group {
		e := &exs[j]
		if !e.IsPost() || !e.HasKey || !e.ProviderDone || e.Fingerprint != fp || asOtherAccount(w.History, *e) {
			continue
		}
		if !IsShape(ProbeKind(w.History, *e)) {
			switch {
			case e.ProviderStatus == 409 || e.ProviderStatus >= 500 || refusedStoreDown(*e):
			case f == nil:
				f = e
			case e.ProviderStatus != f.ProviderStatus || e.ProviderBodyDigest != f.ProviderBodyDigest:
				unsteady = true
			default:
				replayed++
			}
			continue
		}
		if f == nil || replayed == 0 || unsteady || refusedStoreDown(*e) {
			continue
		}
		switch {
		case e.ProviderStatus == 422,
			e.ProviderStatus >= 200 && e.ProviderStatus < 300 && e.ProviderBodyDigest != f.ProviderBodyDigest,
			e.ProviderStatus == 402 && e.ProviderBodyDigest != f.ProviderBodyDigest:
			return false
		}
	}
	return true
}

// stepKeyScopedPerAccount judges whole when anything merchant B's
// verdicts rest on may have changed: B's exchanges, an exchange of A's
// under a key B sent before it (B's later requests compare against A's
// answers before them), B's ledger, or A's ledger holding a charge id
// answered to B.
func (c *Checker) stepKeyScopedPerAccount(w World) Finding {
	if len(c.others) == 0 && len(w.OtherCharges) == 0 {
		return Finding{}
	}
	exs := w.History.Exchanges
	suspect := len(c.others) == 0 || ledgerMark(w.OtherCharges) != c.g.lastOther
	for _, i := range c.touched {
		e := &exs[i]
		if !e.IsPost() || !c.g.bKeys[e.Key] {
			continue
		}
		if !asOtherAccount(w.History, *e) {
			group := c.g.byKey[e.Key]
			for k := len(group) - 1; k >= 0 && group[k] > i && !suspect; k-- {
				suspect = asOtherAccount(w.History, exs[group[k]])
			}
			continue
		}
		suspect = true
		if e.ProviderChargeID != "" {
			c.g.bAnswered[e.ProviderChargeID] = true
		}
	}
	if len(c.g.bAnswered) > 0 {
		if c.st.whole {
			suspect = true
		}
		for _, k := range c.st.dc {
			suspect = suspect || c.g.bAnswered[c.st.charges[k].ID]
		}
	}
	c.g.lastOther = ledgerMark(w.OtherCharges)
	if suspect {
		return checkKeyScopedPerAccount(w)
	}
	return Finding{}
}

// ledger tells two states of a provider's ledger apart: its length and
// last charge id (charges are appended).
type ledger struct {
	n    int
	last string
}

func ledgerMark(cs []models.Charge) ledger {
	if len(cs) == 0 {
		return ledger{}
	}
	return ledger{len(cs), cs[len(cs)-1].ID}
}

func (c *Checker) stepKeyScopedPerEndpoint(w World) Finding {
	exs := w.History.Exchanges
	for _, i := range c.touched {
		e := &exs[i]
		if !e.IsPost() && !e.IsRefund() {
			continue
		}
		group := c.g.byKey[e.Key]
		for _, j := range group {
			if r := &exs[j]; r.IsRefund() && r.HasKey && r.ProviderDone && !endpointRefund(exs, j, group).Holds() {
				return checkKeyScopedPerEndpoint(w)
			}
		}
	}
	return Finding{}
}

// isClientPost reports whether exchange i of w is one of the client's
// own creates (clientPosts).
func (c *Checker) isClientPost(w World, i int) bool {
	e := &w.History.Exchanges[i]
	return e.IsPost() && !isProbe(w.History, *e)
}
