// Package outside serves a client's attempt store (client.AttemptStore)
// from goroutines started outside every synctest bubble (Store), so that
// one PostgreSQL pool serves a whole conformance run.
package outside

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/client"
)

// Store forwards an AttemptStore's calls to goroutines started
// outside every synctest bubble, so that one PostgreSQL pool serves a whole
// run: pgx works inside a bubble too (sut/client/storetest runs there), but
// a pool made in a sequence's bubble must die with it, and each new pool
// pays new PostgreSQL connections (a forked backend each, ~6 ms) — more
// than the sequence's own queries. Waiting for a worker, like waiting on a
// socket, is not durably blocking: virtual time stands still meanwhile.
//
// Only plain values cross: the caller's context is left behind (the server
// bounds each statement; pgstore sets statement_timeout), and GetOrStart's
// id and key are drawn in the caller's bubble, on its virtual clock, before
// the call (drawn for every call, used when an attempt is created).
//
// A Store is safe for concurrent use; New's stop must run
// after every call returned.
type Store struct {
	inner client.AttemptStore
	idle  chan *worker // created outside any bubble
}

// worker runs one call at a time; its channels are made outside any bubble.
type worker struct {
	in  chan func()
	out chan struct{}
}

func (w *worker) loop() {
	for f := range w.in {
		f()
		w.out <- struct{}{}
	}
}

// New starts n workers for inner; call it outside any bubble.
func New(inner client.AttemptStore, n int) (o *Store, stop func()) {
	o = &Store{inner: inner, idle: make(chan *worker, n)}
	for range n {
		w := &worker{in: make(chan func()), out: make(chan struct{})}
		go w.loop()
		o.idle <- w
	}
	return o, func() {
		for range n {
			close((<-o.idle).in)
		}
	}
}

// do runs f on an idle worker and waits for it.
func (o *Store) do(f func()) {
	w := <-o.idle
	w.in <- f
	<-w.out
	o.idle <- w
}

// call runs f on a worker with a context of the worker's own.
func call[T any](o *Store, f func(ctx context.Context) (T, error)) (T, error) {
	var v T
	var err error
	o.do(func() { v, err = f(context.Background()) })
	return v, err
}

func (o *Store) Open(_ context.Context, instance string) (client.Epoch, error) {
	return call(o, func(ctx context.Context) (client.Epoch, error) { return o.inner.Open(ctx, instance) })
}

func (o *Store) Fence(_ context.Context, e client.Epoch) error {
	_, err := call(o, func(ctx context.Context) (struct{}, error) { return struct{}{}, o.inner.Fence(ctx, e) })
	return err
}

func (o *Store) OpenOrder(_ context.Context, e client.Epoch, total int64, currency string) (models.Order, error) {
	return call(o, func(ctx context.Context) (models.Order, error) { return o.inner.OpenOrder(ctx, e, total, currency) })
}

func (o *Store) LoadOrder(_ context.Context, id int64) (models.Order, error) {
	return call(o, func(ctx context.Context) (models.Order, error) { return o.inner.LoadOrder(ctx, id) })
}

func (o *Store) GetOrStart(_ context.Context, e client.Epoch, sp client.StartSpec) (client.Started, error) {
	id, key := sp.NewID(), sp.NewKey() // on the caller's clock
	sp.NewID, sp.NewKey = func() uuid.UUID { return id }, func() string { return key }
	return call(o, func(ctx context.Context) (client.Started, error) { return o.inner.GetOrStart(ctx, e, sp) })
}

func (o *Store) Succeed(_ context.Context, e client.Epoch, id uuid.UUID, chargeID string) (models.Order, error) {
	return call(o, func(ctx context.Context) (models.Order, error) { return o.inner.Succeed(ctx, e, id, chargeID) })
}

func (o *Store) EndAttempt(_ context.Context, e client.Epoch, id uuid.UUID, status models.AttemptStatus) (models.Order, error) {
	return call(o, func(ctx context.Context) (models.Order, error) { return o.inner.EndAttempt(ctx, e, id, status) })
}

func (o *Store) Abandon(_ context.Context, e client.Epoch, a client.AbandonSpec) (bool, error) {
	return call(o, func(ctx context.Context) (bool, error) { return o.inner.Abandon(ctx, e, a) })
}

func (o *Store) MarkChecked(_ context.Context, e client.Epoch, id uuid.UUID, now time.Time) error {
	_, err := call(o, func(ctx context.Context) (struct{}, error) { return struct{}{}, o.inner.MarkChecked(ctx, e, id, now) })
	return err
}

func (o *Store) OpenAttempts(_ context.Context, cutoff time.Time) ([]models.PaymentAttempt, error) {
	return call(o, func(ctx context.Context) ([]models.PaymentAttempt, error) { return o.inner.OpenAttempts(ctx, cutoff) })
}

func (o *Store) SetKey(_ context.Context, e client.Epoch, id uuid.UUID, key string) error {
	_, err := call(o, func(ctx context.Context) (struct{}, error) { return struct{}{}, o.inner.SetKey(ctx, e, id, key) })
	return err
}

type snapshot struct {
	orders   []models.Order
	attempts []models.PaymentAttempt
}

func (o *Store) Snapshot(context.Context) ([]models.Order, []models.PaymentAttempt, error) {
	s, err := call(o, func(ctx context.Context) (snapshot, error) {
		orders, atts, err := o.inner.Snapshot(ctx)
		return snapshot{orders, atts}, err
	})
	return s.orders, s.attempts, err
}

// Reset empties the store when inner can (pgstore.Store.Reset).
func (o *Store) Reset() error {
	r, ok := o.inner.(interface{ Reset(context.Context) error })
	if !ok {
		return nil
	}
	_, err := call(o, func(ctx context.Context) (struct{}, error) { return struct{}{}, r.Reset(ctx) })
	return err
}
