package models

import "slices"

// Delta is what a History recorded between two calls of Sync on one
// Snapshot: the elements from Exchanges, Ops and Steps on (lengths at the
// Sync before) are new, and ChangedExchanges and ChangedOps are the indices
// below those lengths whose element changed since (ascending, each once).
// A checker reads only these instead of the whole history.
type Delta struct {
	Steps, Ops, Exchanges int
	ChangedOps            []int
	ChangedExchanges      []int

	from *History // the history Sync copies from; nil in a Clone
	log  int      // the entries of from.changes already applied
}

// change is one entry of History.changes: an operation's or an exchange's
// index whose element changed.
type change struct {
	op bool
	i  int
}

// Sync brings s up to date with h, copying only what h recorded since
// the last Sync of s (the step's new and changed events), and sets
// s.Delta to say what that was. A snapshot Sync did not fill before (the
// zero Snapshot, a copy, or one of another history) is filled whole, with
// a Delta whose lengths are 0: everything is new. s's slices are reused
// and overwritten in place: keep a Clone of what must outlive the next
// Sync. Sync is safe to call while h records; s is not safe for
// concurrent use.
func (h *History) Sync(s *Snapshot) {
	h.mu.Lock()
	defer h.mu.Unlock()
	d := s.Delta
	if d == nil || d.from != h || len(s.Exchanges) > len(h.exchanges) || len(s.Ops) > len(h.ops) || len(s.Steps) > len(h.steps) {
		if d == nil || d.from != h {
			d = &Delta{}
		}
		*d = Delta{from: h, log: len(h.changes), ChangedOps: d.ChangedOps[:0], ChangedExchanges: d.ChangedExchanges[:0]}
		s.Steps = append(grown(s.Steps[:0], len(h.steps)), h.steps...)
		s.Ops = append(grown(s.Ops[:0], len(h.ops)), h.ops...)
		s.Exchanges = append(grown(s.Exchanges[:0], len(h.exchanges)), h.exchanges...)
		s.Delta = d
		return
	}
	d.Steps, d.Ops, d.Exchanges = len(s.Steps), len(s.Ops), len(s.Exchanges)
	d.ChangedOps, d.ChangedExchanges = d.ChangedOps[:0], d.ChangedExchanges[:0]
	for _, c := range h.changes[d.log:] {
		switch {
		case c.op && c.i < d.Ops:
			d.ChangedOps = append(d.ChangedOps, c.i)
		case !c.op && c.i < d.Exchanges:
			d.ChangedExchanges = append(d.ChangedExchanges, c.i)
		}
	}
	d.log = len(h.changes)
	slices.Sort(d.ChangedOps)
	d.ChangedOps = slices.Compact(d.ChangedOps)
	slices.Sort(d.ChangedExchanges)
	d.ChangedExchanges = slices.Compact(d.ChangedExchanges)
	for _, i := range d.ChangedOps {
		s.Ops[i] = h.ops[i]
	}
	for _, i := range d.ChangedExchanges {
		s.Exchanges[i] = h.exchanges[i]
	}
	s.Steps = append(s.Steps, h.steps[d.Steps:]...)
	s.Ops = append(s.Ops, h.ops[d.Ops:]...)
	s.Exchanges = append(s.Exchanges, h.exchanges[d.Exchanges:]...)
}

// Clone is a copy of s that no later Sync changes; its Delta, if any, is
// a copy too (what changed at the Sync that made s), no longer tied to
// the history.
func (s Snapshot) Clone() Snapshot {
	c := Snapshot{
		Steps:     append([]Step(nil), s.Steps...),
		Ops:       append([]Operation(nil), s.Ops...),
		Exchanges: append([]Exchange(nil), s.Exchanges...),
	}
	if s.Delta != nil {
		d := *s.Delta
		d.from, d.log = nil, 0
		d.ChangedOps = append([]int(nil), d.ChangedOps...)
		d.ChangedExchanges = append([]int(nil), d.ChangedExchanges...)
		c.Delta = &d
	}
	return c
}

// LastOp is the id of the most recent operation of kind, or 0.
func (h *History) LastOp(kind OpKind) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := len(h.ops) - 1; i >= 0; i-- {
		if h.ops[i].Kind == kind {
			return h.ops[i].ID
		}
	}
	return 0
}

// Version changes with every record h takes (a step, an operation or an
// exchange begun or updated): two equal versions mean nothing was
// recorded in between.
func (h *History) Version() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seq
}

// Exchanges is how many exchanges h has recorded.
func (h *History) Exchanges() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.exchanges)
}

// grown is s with room for n elements and as many again (at least 16):
// a snapshot kept in step grows with its history, and regrowing it by
// doubling from a few elements copied each 536-byte exchange up to five
// times per sequence (issue 29).
func grown[T any](s []T, n int) []T {
	return slices.Grow(s, n+max(n, 16))
}
