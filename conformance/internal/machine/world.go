package machine

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/idemcheck/idemcheck/checkout"
	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/backend"
	"github.com/idemcheck/idemcheck/sut/client"
	"github.com/idemcheck/idemcheck/sut/mutants"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// Cards are the shopper's cards by label; reports show labels, never tokens.
var cards = map[string]string{
	"visa":       "tok_visa",
	"mastercard": "tok_mastercard",
	"declined":   "tok_chargeDeclined",
}

// cardLabels is cards' keys in drawing order.
var cardLabels = []string{"visa", "mastercard", "declined"}

// world is one sequence's systems: the client under test (the reference
// client, a mutant of it, or a checkout.Client of CheckClient) and the
// provider under test wired through the fault layer, on the run's clock
// (virtual for the embedded provider, real plus an offset otherwise).
type World struct {
	cfg Config
	// checker judges the sequence's steps incrementally (stepVerdict).
	checker *check.Checker
	clock   faults.Clock
	// real is true when time is real (WireMock): a goroutine's own wait is
	// then a scaled real pause, and provider-only invariants are left out
	// unless specJudged or loopback.
	real bool
	// specJudged is true when time is real but the provider's decisions
	// are still seen in order (the provider on Redis, behind the InProcess
	// wire): every invariant is judged as in process.
	specJudged bool
	// loopback: the embedded provider serves a client in another process
	// (CheckService), and its decisions are still recorded.
	loopback bool
	// killable: the provider process can be killed (World.Killable).
	killable bool
	// lifecycle is the URL's hooks as the fault layer's Lifecycle (nil
	// without hooks); drawRestart and drawOutage say which lifecycle
	// faults drawFaults draws (lifecycle.go).
	lifecycle               faults.Lifecycle
	drawRestart, drawOutage bool
	// closers end what the world started outside the process (a service,
	// the loopback proxy), last first.
	closers []func()
	hist    *models.History
	// synced is the history as the last StepSnapshot saw it, brought up to
	// date by models.History.Sync at each step.
	synced models.Snapshot
	// recentMu guards recent, the history as a step's own reads (probes)
	// last saw it, brought up to date by Sync (recentView): no copy of the
	// whole history per read (issue 29).
	recentMu sync.Mutex
	recent   models.Snapshot
	// state is the client store's orders, attempts and refund intents as
	// the last StepSnapshot saw them, kept from the store's change log
	// (stateview.go), when the client is the reference over the in-memory
	// store.
	state  stateView
	prov   backend.Backend
	faults *faults.Transport
	// schedules lists each step's drawn fault schedule, for the report.
	schedules []string
	// store is the reference client's attempt store (Config.ClientStore),
	// shared by every instance; nil for a client under test.
	store client.AttemptStore
	// ccfg is the reference client's configuration; for a client under
	// test only its timings count (what finish outwaits).
	ccfg client.Config
	// cli is client instance 0; extra holds instances 1.. when
	// Config.Instances > 1, each a process of its own over store. The
	// state machine drives them only through checkout.Client and its
	// capabilities.
	cli   checkout.Client
	extra []checkout.Client
	// storeErr is the first error opening the store for a client; the next
	// snapshot reports it.
	storeErr error
	points   pointHooks
	auth     clientAuth // what a Go client under test authenticates with (auth.go)
	// stripe: the embedded provider speaks Stripe's API to the client
	// under test (UnderTest.Dialect; stripe.go).
	stripe bool
	// lagGate waits out the lookup lag a URL's profile publishes before a
	// reconciliation and before the provider's charges are read
	// (lookuplag.go); nil elsewhere.
	lagGate  *remote.LagGate
	keys     *keySource
	orders   []models.Order
	lastCard map[int64]string

	mu    sync.Mutex     // guards paid, broke, hung
	paid  map[int64]bool // orders a checkout answered Paid, for a client without a view
	broke error          // the first broken contract of the client under test (contract.go)
	// hung holds the answers still to come of calls of the client under
	// test that outlived their bound (drainHung waits for them).
	hung []chan checkout.Result
}

// NewWorld builds the systems for one sequence, with mutant m's bugs
// planted (nil: none).
func NewWorld(cfg Config, m *mutants.Mutant) (*World, error) {
	w := &World{cfg: cfg, hist: models.NewHistory(), lastCard: map[int64]string{}, paid: map[int64]bool{}}
	switch {
	case cfg.Provider == ProviderWireMock:
		w.clock, w.real = &faults.OffsetClock{}, true
		wm, err := backend.NewWireMock(m, w.hist, w.clock.Now)
		if err != nil {
			return nil, err
		}
		w.prov = wm
	case cfg.OverHTTP():
		// A service in another process: the embedded provider in real time,
		// behind a loopback proxy (overHTTP).
		w.clock, w.prov = backend.NewLoopback(cfg.Processing, cfg.Retention, m, w.hist, cfg.Under.MaxDuration, cfg.Under.Deadline)
		w.real, w.loopback = true, true
	case cfg.IsRemote():
		clock := &faults.OffsetClock{}
		r := backend.NewRemote(cfg.Remote, w.hist, clock.Now)
		rb := backend.WithSecondAccount(r, asOtherAccount) // merchant B with accounts: 2
		w.clock, w.real, w.prov = backend.Clock{OffsetClock: clock, Quiesce: rb.Quiesce}, true, rb
		if w.lifecycle = r.Lifecycle(); w.lifecycle != nil {
			w.drawRestart, w.drawOutage = r.Draws()
		}
	case cfg.OnRedis():
		clock := &faults.OffsetClock{}
		w.real, w.specJudged = true, true
		rb, err := backend.NewRedis(cfg.RedisURL, cfg.Retention, w.scale(cfg.Processing), m, w.hist, clock.Now)
		if err != nil {
			return nil, err
		}
		w.clock, w.prov = backend.Clock{OffsetClock: clock, Quiesce: rb.Settle}, rb
		w.killable = true
	default:
		w.clock = faults.VirtualClock{}
		w.prov = backend.NewEmbedded(cfg.Processing, cfg.Retention, m, w.hist, w.clock.Now)
	}
	w.keys = newKeySource(w.clock.Now)
	if cfg.Remote != nil {
		// Keys and attempt ids (so merchant references) unique to the run
		// and the sequence: they share the sandbox.
		w.keys = newRemoteKeySource(w.clock.Now, cfg.Remote.RunID())
	}
	wire := w.prov.Wire()
	if lag := cfg.remoteLookupLag(); lag > 0 { // lookuplag.go
		w.lagGate = remote.NewLagGate(wire, lag)
		wire = w.lagGate
	}
	w.faults = faults.NewTransport(wire, w.hist, nil)
	w.faults.Now = w.clock.Now
	w.faults.Lifecycle = w.lifecycle
	if cfg.Remote != nil {
		w.faults.MaxBody = cfg.Remote.Config().Limits.MaxBody
	}
	w.ccfg = client.Config{
		BaseURL:    w.prov.BaseURL(),
		HTTPClient: &http.Client{Transport: w.faults},
		Now:        w.clock.Now,
		NewKey:     w.keys.Key,
		NewID:      w.keys.UUID,
		// Spelled out so the harness knows the durations it must outwait.
		AttemptTimeout: w.scale(client.DefaultAttemptTimeout),
		TotalTimeout:   w.scale(client.DefaultTotalTimeout),
		RetryDelay:     w.scale(client.DefaultRetryDelay),
		MaxRetries:     client.DefaultMaxRetries,
		MinAge:         client.DefaultMinAge,
		AbandonAfter:   client.DefaultAbandonAfter,
		Interval:       client.DefaultInterval,
		KeyRetention:   cfg.Retention, // the window no-stale-key judges by
	}
	if u := cfg.Under; u != nil {
		if err := w.openUnderTest(u); err != nil {
			w.Close()
			return nil, err
		}
		return w, nil
	}
	if m != nil && m.Client != nil {
		m.Client(&w.ccfg)
	}
	w.ccfg.At = w.points.at
	store, err := openStore(cfg)
	if err != nil {
		return nil, err
	}
	w.store = store
	w.cli = w.open(0)
	for i := 1; i < cfg.Instances; i++ {
		w.extra = append(w.extra, w.open(i))
	}
	return w, nil
}

// open is reference client instance i as a checkout.Client.
func (w *World) open(i int) *refClient {
	return &refClient{w: w, i: i, cli: w.openProcess(i)}
}

// openProcess starts a process of reference client instance i over the store.
func (w *World) openProcess(i int) *client.Client {
	cfg := w.ccfg
	cfg.Instance = instanceName(i, w.cfg.Instances)
	c, err := client.Open(context.Background(), cfg, w.store)
	if err != nil && w.storeErr == nil {
		w.storeErr = err
	}
	return c
}

// instance is client instance i (0 is w.cli).
func (w *World) instance(i int) checkout.Client {
	if i == 0 {
		return w.cli
	}
	return w.extra[i-1]
}

// scale is d on the wire's time: d itself in virtual time, d×TimeScale in
// real time (the client's 3 s attempt timeout becomes 200 ms).
func (w *World) scale(d time.Duration) time.Duration {
	if !w.real {
		return d
	}
	return time.Duration(float64(d) * w.cfg.TimeScale)
}

// pause is one goroutine's own wait of d (a click started later, a crash
// after a while): a virtual sleep in the bubble, a scaled real one
// otherwise. Unlike clock.Advance it does not move everyone's clock.
func (w *World) pause(d time.Duration) {
	d = w.scale(d)
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	<-t.C
}

// Snapshot is the World the invariants read now, or an error when the
// provider's truth or journal could not be read. Its history is a copy.
func (w *World) Snapshot() (check.World, error) { return w.read(false) }

// StepSnapshot is Snapshot after a step: its history is the world's own,
// brought up to date by models.History.Sync, which copies only what was
// recorded since the last StepSnapshot, and its Delta says what that was
// (check.Checker reads only that). The next StepSnapshot overwrites it in
// place: Clone what must outlive it. Over a journaled backend, whose Amend
// rewrites earlier exchanges, it is Snapshot.
func (w *World) StepSnapshot() (check.World, error) {
	_, journaled := w.prov.(backend.Journaled)
	return w.read(!journaled)
}

// read is Snapshot, over the synced history when synced.
func (w *World) read(synced bool) (check.World, error) {
	w.awaitLookupLag() // against a URL that lags, its lookups are the provider's truth
	charges, err := w.prov.Charges()
	if err != nil {
		return check.World{}, err
	}
	if w.storeErr != nil {
		return check.World{}, w.storeErr
	}
	other, err := backend.OtherCharges(w.prov)
	if err != nil {
		return check.World{}, err
	}
	var view checkout.View
	st, follows := w.followsStore()
	if v, ok := w.cli.(checkout.Viewer); ok && !(synced && follows) {
		if view, err = v.View(context.Background()); err != nil {
			return check.World{}, fmt.Errorf("conformance: read the client's view: %w", err)
		}
	}
	var h models.Snapshot
	if synced {
		w.hist.Sync(&w.synced)
		h = w.synced
	} else {
		h = w.hist.Snapshot()
		if j, ok := w.prov.(backend.Journaled); ok {
			if err := j.Amend(&h); err != nil {
				return check.World{}, err
			}
		}
	}
	refunds, judged, err := w.refundTruth()
	if err != nil {
		return check.World{}, err
	}
	cw := check.World{
		Refunds: refunds, RefundIntents: view.Refunds, RefundsJudged: judged,
		History:      h,
		Orders:       view.Orders,
		Attempts:     view.Attempts,
		Charges:      charges,
		OtherCharges: other,
		Declines:     backend.Declines(w.prov),
		Retention:    w.cfg.Retention,
		Killable:     w.killable,
		Now:          w.clock.Now(),
	}
	if synced && follows {
		w.state.follow(st, &cw, appendOnlyLedger(w.prov))
	}
	return cw, nil
}

// openOrder opens an order for total minor units of currency: placed by a
// checkout.Placer, numbered 1, 2, 3… by the harness otherwise.
func (w *World) openOrder(actor string, total int64, currency string) models.Order {
	id := w.hist.BeginOp(models.Operation{Actor: actor, Kind: models.OpOpenOrder, Amount: total, Currency: currency, InvokedAt: w.clock.Now()})
	o := models.Order{ID: int64(len(w.orders) + 1), Total: total, Currency: currency, Status: models.OrderPlaced}
	if p, ok := w.cli.(checkout.Placer); ok {
		n, err := p.PlaceOrder(models.WithOp(context.Background(), id), total, currency)
		if err != nil {
			n = 0 // a client that cannot place an order: its checkouts answer for order 0
		}
		o = w.orderState(n)
		o.ID, o.Total, o.Currency = n, total, currency
	}
	w.hist.EndOp(id, func(op *models.Operation) {
		op.OrderID, op.Returned, op.ReturnedAt, op.Result = o.ID, true, w.clock.Now(), string(o.Status)
	})
	w.orders = append(w.orders, o)
	return o
}

// checkout runs one shopper checkout of order with card and records it. It
// may run on several goroutines at once (a double click); callers note the
// card in lastCard from the step's own goroutine.
func (w *World) checkout(cli checkout.Client, actor string, order models.Order, card string) checkout.Result {
	return w.pay(actor, order, card, cli.Checkout)
}

// callback runs the client's payment-ready callback path for order with
// card, recorded as a checkout by actor "callback"; a client without
// checkout.Callback gets the shopper's Checkout.
func (w *World) callback(cli checkout.Client, order models.Order, card string) checkout.Result {
	if cb, ok := cli.(checkout.Callback); ok {
		return w.pay("callback", order, card, cb.PaymentReady)
	}
	return w.pay("callback", order, card, cli.Checkout)
}

// pay records one call of a client payment path (Checkout or PaymentReady).
func (w *World) pay(actor string, order models.Order, card string,
	call func(ctx context.Context, o checkout.Order, token string) checkout.Result) checkout.Result {
	id := w.hist.BeginOp(models.Operation{
		Actor: actor, Kind: models.OpCheckout, OrderID: order.ID, Card: card,
		Amount: order.Total, Currency: order.Currency, InvokedAt: w.clock.Now(),
	})
	res := w.guarded("a checkout", func() checkout.Result {
		return call(models.WithOp(context.Background(), id), checkout.Order{ID: order.ID, Amount: order.Total, Currency: order.Currency}, cards[card])
	})
	if res.Status == 0 {
		res.Status = res.Outcome.Status()
	}
	w.hist.EndOp(id, func(op *models.Operation) {
		op.ReturnedAt, op.Returned = w.clock.Now(), true
		op.Result, op.HTTPStatus = string(res.Outcome), res.Status
		if res.Err != nil {
			op.Result = "broke the contract: " + res.Err.Error()
		}
		op.AttemptID, op.ChargeID = res.AttemptID, res.ChargeID
	})
	if res.Outcome == checkout.Paid {
		w.mu.Lock()
		w.paid[order.ID] = true
		w.mu.Unlock()
	}
	return res
}

// advance lets d pass on the run's clock, recorded as the clock's operation.
func (w *World) advance(d time.Duration) {
	id := w.hist.BeginOp(models.Operation{Actor: "clock", Kind: models.OpAdvance, Detail: d.String(), InvokedAt: w.clock.Now()})
	w.clock.Advance(d)
	w.hist.EndOp(id, func(op *models.Operation) { op.Returned, op.ReturnedAt = true, w.clock.Now() })
}

// reconcile runs the reconciliation job once and returns what it said.
func (w *World) reconcile(actor string) string {
	w.awaitLookupLag()
	id := w.hist.BeginOp(models.Operation{Actor: actor, Kind: models.OpReconcile, InvokedAt: w.clock.Now()})
	said := w.reconcileGuarded(models.WithOp(context.Background(), id), w.cli)
	w.hist.EndOp(id, func(op *models.Operation) {
		op.Returned, op.ReturnedAt = true, w.clock.Now()
		op.Result = said
	})
	return said
}

// restart is a crash of client instance 0 (a checkout.Restarter): the
// process dies and a new one starts from the durable store. It reports
// whether the client can restart.
func (w *World) restart() bool {
	r, ok := w.cli.(checkout.Restarter)
	if ok {
		_ = r.Restart(context.Background()) // a restart that failed shows in the next snapshot or checkout
	}
	return ok
}

// order returns the current state of order id.
func (w *World) order(id int64) models.Order { return w.orderState(id) }
