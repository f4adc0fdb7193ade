package check

import (
	"reflect"
	"time"

	"github.com/idemcheck/idemcheck/models"
)

// Checker judges one sequence step by step: given the World after each
// step, it returns the first violation of its invariants, exactly as
// Evaluate over that World would (the property test in checker_test.go
// and conformance's TestCheckerAgreesWithWholeEvaluation hold it to that
// on every prefix), but judges only what the step added. It reads the
// history's models.Delta (what the step added or changed, from
// models.History.Sync) and keeps between steps the specification's key
// states (the replay of the provider's decisions, models.Spec), the
// verdicts so far, the keys per intent and the first send of each key,
// the history's creates and refunds by call, operation and key (steps.go),
// and a copy of the client's and the provider's state indexed by
// reference and order (state.go). So a step costs O(what it added or
// changed) for every invariant; the state's elements are compared with
// the last step's only where the World's StateDelta does not say what
// changed (a client other than the reference over its in-memory store, a
// provider other than the embedded one). An invariant whose rejudged
// group fails is judged whole once, for Evaluate's first violation.
//
// A step's World must extend the previous one's history (same exchanges,
// appended to; the provider's events numbered after the last one seen).
// When it does not — a history that shrank, provider events that
// interleave with those already replayed, or a killable provider's key
// whose early release or lease end became known only now — the Checker
// replays the whole history once, so it is never wrong, only slower; a
// World without a Delta that follows on from the last step (a copy, or
// built by hand) is read as if every exchange had changed. After
// a violation it judges every later World whole. A Checker is not safe for
// concurrent use; the zero value is not usable, use NewChecker.
type Checker struct {
	invs []Invariant
	dead bool // a violation was found: judge whole from now on

	seen        int   // exchanges of the history indexed so far
	posts       []int // indices of Posts in the history
	clientPosts []int // indices of the client's own creates (clientPosts)
	others      []int // indices of merchant B's probes (ProbeOtherAccount)

	r replay

	// key-format, no-stale-key, one-key-per-intent: client creates judged
	kfAt, staleAt, okAt int
	fresh               freshPosts // clientPostsFrom's copy, shared by the three at a step
	firstSent           map[string]time.Time
	keysOf              map[string][]string
	refsOf              map[string]string
	refIndex            map[string]int
	fpOf                map[string]string // key → its first body's fingerprint (oneBodyOf)
	// replay-consistent, mismatch-rejected: verdicts judged
	rcAt, mrAt int
	declines   int // verdicts that may have processed a decline (checkDeclinesRunOnce)
	// merchant B's probes (by index) and those that may have processed a
	// decline, with their count (declinesRunOnce)
	isOther, otherAllows map[int]bool
	othersAllowed        int

	fullReplays int // times the replay started over (Replays)

	// touched and touchedOps are the indices of the exchanges and
	// operations the step added or changed (all of them when the
	// history's Delta does not follow on from the last step); opsSeen is
	// how many operations the last step saw.
	touched, touchedOps []int
	opsSeen             int
	g                   groups
	st                  state
}

// replay is the incremental form of runSpec.
type replay struct {
	spec         models.Spec
	lastSeq      int
	open         map[int]*openPost // posts whose provider events are not all replayed, by index
	pending      int               // open posts at the provider (forwarded, not answered)
	expects      map[int]models.Expect
	first        map[string]string
	firstHeaders map[string]models.ResponseHeaders
	verdicts     []specVerdict
	abandons     []abandon
	evs          []models.ProviderEvent // scratch
	killable     bool
	retention    time.Duration
}

type openPost struct {
	i       int  // index in the history
	arrived bool // its arrival is replayed
	// forgetUnknown: a killable provider's arrival replayed before its
	// answer: whether the key was freed early was not known then.
	forgetUnknown bool
	pending       bool // counted in replay.pending
}

// abandon is a dead holder's key, in flight until the next time jump
// after its arrival, as known when it was replayed.
type abandon struct {
	arrived, until time.Time
}

// NewChecker is a Checker of invs (in order: the first that fails names
// the failure, as in Evaluate).
func NewChecker(invs []Invariant) *Checker {
	stock := map[string]uintptr{}
	for _, inv := range Safety() {
		if inv.step != nil {
			stock[inv.Name] = reflect.ValueOf(inv.Check).Pointer()
		}
	}
	own := make([]Invariant, len(invs))
	for i, inv := range invs {
		if inv.step != nil && reflect.ValueOf(inv.Check).Pointer() != stock[inv.Name] {
			inv.step = nil // its Check was replaced: judge it whole
		}
		own[i] = inv
	}
	return &Checker{invs: own}
}

// Step judges w, the World after one more step of the sequence, and
// returns the first violation, or nil.
func (c *Checker) Step(w World) *ViolationError {
	if c.dead {
		return Evaluate(w, c.invs)
	}
	rebuilt := c.advance(w)
	c.g.init()
	c.st.update(w)
	if rebuilt {
		c.kfAt, c.staleAt, c.okAt, c.rcAt, c.mrAt = 0, 0, 0, 0, 0
		c.firstSent, c.keysOf, c.refsOf, c.refIndex, c.fpOf = nil, nil, nil, nil, nil
		c.declines = 0
	}
	w.memo = c.memo(w)
	for _, inv := range c.invs {
		var f Finding
		if inv.step != nil {
			f = inv.step(c, w)
		} else {
			f = inv.Check(w)
		}
		if !f.Holds() {
			c.dead = true
			return &ViolationError{Invariant: inv.Name, Message: f.Message, Category: f.Category}
		}
	}
	return nil
}

// Replays is how many times the Checker replayed the whole history since
// its first step, because a World did not extend the previous one (see
// Checker): 0 on a sequence judged step by step throughout.
func (c *Checker) Replays() int { return c.fullReplays }

// memo is what the whole-history invariants share: the Checker's replay
// (the posts are gathered only if a whole form runs).
func (c *Checker) memo(w World) *memo {
	return &memo{verdicts: c.r.verdicts, done: [3]bool{false, false, true}}
}

// collectTouched sets touched and touchedOps: from the history's Delta
// when it follows on from the last step (it counted before exchanges and
// opsSeen operations then), or everything.
func (c *Checker) collectTouched(w World, before int, rebuilt bool) {
	h := w.History
	c.touched, c.touchedOps = c.touched[:0], c.touchedOps[:0]
	if d := h.Delta; d != nil && !rebuilt && d.Exchanges == before && d.Ops == c.opsSeen {
		c.touched = append(c.touched, d.ChangedExchanges...)
		c.touchedOps = append(c.touchedOps, d.ChangedOps...)
	} else {
		before, c.opsSeen = 0, 0
	}
	for i := before; i < len(h.Exchanges); i++ {
		c.touched = append(c.touched, i)
	}
	for i := c.opsSeen; i < len(h.Ops); i++ {
		c.touchedOps = append(c.touchedOps, i)
	}
	c.opsSeen = len(h.Ops)
}

// advance indexes the exchanges w adds and replays the provider events
// they and the open ones add; it reports whether it had to start over.
func (c *Checker) advance(w World) (rebuilt bool) {
	exs := w.History.Exchanges
	before := c.seen
	if len(exs) < c.seen || c.r.killable != w.Killable || c.r.retention != w.Retention {
		first := c.seen == 0 && c.r.expects == nil
		c.reset(w)
		if !first {
			c.fullReplays++
		}
		rebuilt = true
	}
	c.index(w, c.seen)
	c.collectTouched(w, before, rebuilt)
	if !c.r.step(w, c.touched) || !c.r.abandonsHold(w) {
		c.reset(w)
		c.fullReplays++
		c.collectTouched(w, 0, true)
		c.r.step(w, c.touched) // from the start: every event is after lastSeq 0
		rebuilt = true
	}
	return rebuilt
}

// reset forgets everything and indexes w's history from the start.
func (c *Checker) reset(w World) {
	invs, n, touched, touchedOps := c.invs, c.fullReplays, c.touched, c.touchedOps
	*c = Checker{invs: invs, fullReplays: n, touched: touched, touchedOps: touchedOps}
	c.r = replay{killable: w.Killable, retention: w.Retention}
	// Built over a whole history, the indices get room for as many again:
	// the steps after a rebuild pay a map's doubling in their share, as a
	// sequence grown from its first step does, not all of it at once
	// (issue 29: BenchmarkCheckerStep at 1000 exchanges spent a third of
	// its steps rehashing the maps the priming step had just filled).
	room := 2 * len(w.History.Exchanges)
	c.g.initSized(room)
	c.r.open = make(map[int]*openPost, room)
	c.index(w, 0)
}

// index files the POSTs of w's history from its exchange from on.
func (c *Checker) index(w World, from int) {
	exs := w.History.Exchanges
	for i := from; i < len(exs); i++ {
		e := &exs[i]
		if !e.IsPost() {
			if e.IsRefund() {
				c.g.file(w.History, i, false, false)
			}
			continue
		}
		client, other := false, false
		switch kind := ProbeKind(w.History, *e); {
		case kind == "":
			c.posts = append(c.posts, i)
			if c.r.open == nil {
				c.r.open = map[int]*openPost{}
			}
			c.r.open[i] = &openPost{i: i}
			if client = !isProbe(w.History, *e); client {
				c.clientPosts = append(c.clientPosts, i)
			}
		case kind == ProbeOtherAccount:
			c.others = append(c.others, i)
			if c.isOther == nil {
				c.isOther, c.otherAllows = map[int]bool{}, map[int]bool{}
			}
			c.isOther[i] = true
			other = true
		}
		c.g.file(w.History, i, client, other)
	}
	c.seen = len(exs)
}

// isProbe reports whether e belongs to a probe operation.
func isProbe(h models.Snapshot, e models.Exchange) bool {
	return e.OpID >= 1 && e.OpID <= len(h.Ops) && h.Ops[e.OpID-1].Kind == models.OpProbe
}

// step replays the provider events of the open posts among touched (the
// exchanges new or changed since the last step), in the history's order,
// as runSpec does; false when one of them is numbered before an event
// already replayed, or a killable provider's early release became known
// only now (start over).
func (r *replay) step(w World, touched []int) bool {
	if r.expects == nil {
		r.spec = models.NewSequentialSpec(w.Retention)
		r.expects, r.first, r.firstHeaders = map[int]models.Expect{}, map[string]string{}, map[string]models.ResponseHeaders{}
	}
	exs := w.History.Exchanges
	evs := r.evs[:0]
	for _, i := range touched {
		p, ok := r.open[i]
		if !ok {
			continue
		}
		e := &exs[i]
		r.count(p, e.Forwarded && !e.ProviderDone)
		if !e.Forwarded || e.ArrivalSeq == 0 {
			continue
		}
		if !p.arrived {
			evs = append(evs, models.ProviderEvent{Seq: e.ArrivalSeq, Arrival: true, Ex: e})
			p.arrived = true
			p.forgetUnknown = w.Killable && !e.ProviderDone
		}
		if !e.ProviderDone {
			continue
		}
		if p.forgetUnknown && e.ProviderStatus != 409 && e.ProviderStatus < 500 {
			return false // the arrival would have freed the key: replay whole
		}
		evs = append(evs, models.ProviderEvent{Seq: e.ProviderSeq, Ex: e})
		delete(r.open, i)
	}
	r.evs = evs
	sortEvents(evs)
	if len(evs) > 0 && evs[0].Seq <= r.lastSeq {
		return false
	}
	for _, ev := range evs {
		r.apply(w, ev)
		r.lastSeq = ev.Seq
	}
	return true
}

// count keeps pending: p is at the provider now or not.
func (r *replay) count(p *openPost, now bool) {
	switch {
	case now && !p.pending:
		r.pending++
	case !now && p.pending:
		r.pending--
	}
	p.pending = now
}

// sortEvents sorts evs by Seq (insertion sort: a step adds a handful).
func sortEvents(evs []models.ProviderEvent) {
	for i := 1; i < len(evs); i++ {
		for j := i; j > 0 && evs[j].Seq < evs[j-1].Seq; j-- {
			evs[j], evs[j-1] = evs[j-1], evs[j]
		}
	}
}

// apply is one event of runSpec.
func (r *replay) apply(w World, ev models.ProviderEvent) {
	e := ev.Ex
	if ev.Arrival {
		var x models.Expect
		if w.Killable && e.ProviderDone && e.ProviderStatus != 409 && e.ProviderStatus < 500 {
			r.spec = r.spec.Forget(e.Key, e.ArrivedAt)
		}
		r.spec, x = r.spec.Arrive(e.Key, e.HasKey, e.Fingerprint, e.ArrivedAt)
		r.expects[e.ID] = x
		return
	}
	x := r.expects[e.ID]
	switch {
	case x.Kind == models.ExpectProcess && w.Killable && e.Fault == faultProviderCrash:
		until := nextJump(w, e.ArrivedAt)
		r.abandons = append(r.abandons, abandon{arrived: e.ArrivedAt, until: until})
		r.spec = r.spec.Abandon(e.Key, until, e.ProviderDoneAt)
	case x.Kind == models.ExpectProcess:
		r.spec = r.spec.Complete(e.Key, e.ProviderStatus, e.ProviderBodyDigest, e.ProviderDoneAt)
		if e.ProviderStatus < 500 {
			r.first[e.Key], r.firstHeaders[e.Key] = answer(*e), e.ProviderHeaders
		}
	}
	r.verdicts = append(r.verdicts, specVerdict{ex: *e, expect: x, first: r.first[e.Key], firstHeaders: r.firstHeaders[e.Key]})
}

// abandonsHold reports whether every dead holder's lease still ends where
// it was replayed to end (a time jump since may have moved it).
func (r *replay) abandonsHold(w World) bool {
	for _, a := range r.abandons {
		if !nextJump(w, a.arrived).Equal(a.until) {
			return false
		}
	}
	return true
}

// Fresh verdicts and client creates since an invariant's last step.

func (c *Checker) stepKeyFormat(w World) Finding {
	f := checkKeyFormatOf(w, c.clientPostsFrom(w, c.kfAt))
	c.kfAt = len(c.clientPosts)
	return f
}

func (c *Checker) stepNoStaleKey(w World) Finding {
	if c.firstSent == nil {
		c.firstSent = map[string]time.Time{}
	}
	f := noStaleKeyOf(w, c.clientPostsFrom(w, c.staleAt), c.firstSent)
	c.staleAt = len(c.clientPosts)
	return f
}

func (c *Checker) stepOneKeyPerIntent(w World) Finding {
	if c.keysOf == nil {
		c.keysOf, c.refsOf, c.refIndex, c.fpOf = map[string][]string{}, map[string]string{}, map[string]int{}, map[string]string{}
	}
	fresh := c.clientPostsFrom(w, c.okAt)
	f := oneKeyOf(w, fresh, c.keysOf, c.refsOf, c.refIndex, false)
	c.okAt = len(c.clientPosts)
	if !f.Holds() {
		return f
	}
	// One key, one request: judged after the stored keys, as the whole
	// pass does; the map follows every create either way.
	body := oneBodyOf(w, fresh, c.fpOf)
	// The stored keys: of the attempts that changed, and of the intents
	// the new creates belong to.
	s := &c.st
	if s.whole {
		return checkOneKeyPerIntent(w)
	}
	stored := func(k int) bool {
		a := &s.attempts[k]
		ks := c.keysOf[s.attemptRef(*a)]
		return len(ks) != 1 || ks[0] == a.IdempotencyKey
	}
	for _, k := range s.da {
		if !stored(k) {
			return checkOneKeyPerIntent(w)
		}
	}
	for _, e := range fresh {
		for _, k := range s.attemptsOf[e.MerchantReference] {
			if !stored(k) {
				return checkOneKeyPerIntent(w)
			}
		}
	}
	return body
}

func (c *Checker) stepReplayConsistent(w World) Finding {
	vs := c.r.verdicts[c.rcAt:]
	c.rcAt = len(c.r.verdicts)
	if f := replayVerdicts(w, vs); !f.Holds() {
		return f
	}
	c.declines += declinesAllowed(vs)
	return c.declinesRunOnce(w)
}

func (c *Checker) stepMismatchRejected(w World) Finding {
	vs := c.r.verdicts[c.mrAt:]
	c.mrAt = len(c.r.verdicts)
	return mismatchVerdicts(w, vs)
}

// declinesRunOnce is checkDeclinesRunOnce over the Checker's counts: the
// verdicts' declines so far, plus the creates still at the provider (all
// among the open posts) and merchant B's probes.
//
// Merchant B's probes that may have processed a decline are counted as
// the steps touch them (othersAllowed), not read again at every step.
func (c *Checker) declinesRunOnce(w World) Finding {
	exs := w.History.Exchanges
	for _, i := range c.touched {
		if !c.isOther[i] {
			continue
		}
		e := &exs[i]
		if now := e.ProviderStatus == 402 || e.Forwarded && !e.ProviderDone; now != c.otherAllows[i] {
			c.otherAllows[i] = now
			if now {
				c.othersAllowed++
			} else {
				c.othersAllowed--
			}
		}
	}
	if w.Declines < 0 || w.Killable {
		return Finding{}
	}
	return declinesFinding(w, c.declines+c.r.pending+c.othersAllowed)
}

// clientPostsFrom is the client's creates from its at-th on, as w has
// them. key-format, no-stale-key and one-key-per-intent ask for the same
// ones at a step: the copy is made once per World and read by each (none
// writes to it).
func (c *Checker) clientPostsFrom(w World, at int) []models.Exchange {
	idx := c.clientPosts[at:]
	if len(idx) == 0 {
		return nil
	}
	if f := &c.fresh; w.memo != nil && f.memo == w.memo && f.at == at && f.end == len(c.clientPosts) {
		return f.exs
	}
	out := make([]models.Exchange, len(idx))
	for k, i := range idx {
		out[k] = w.History.Exchanges[i]
	}
	c.fresh = freshPosts{memo: w.memo, at: at, end: len(c.clientPosts), exs: out}
	return out
}

// freshPosts is clientPostsFrom's last copy: of the World whose memo it
// names, the client's creates at to end.
type freshPosts struct {
	memo    *memo
	at, end int
	exs     []models.Exchange
}
