package backend

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/mutants"
	"github.com/idemcheck/idemcheck/sut/provider"
	"github.com/idemcheck/idemcheck/sut/provider/redisstore"
)

// Defaults of a run with the provider on Redis. Redis's TTLs run on its
// own clock, so such a run is in real time and publishes a short
// retention window: DefaultRedisRetention (20 s, longer than any sequence
// lasts in real time, so the reference never forgets a key mid-sequence;
// its thousandth, 20 ms, is shorter than the client's scaled retry delay
// (67 ms at the default time scale of 1/15, 33 ms at 1/30), so a TTL set
// in the wrong unit is gone before the retry).
// The lease, DefaultRedisLease, outlasts the longest drawn processing
// (15 s scaled to 1 s).
const (
	DefaultRedisRetention = 20 * time.Second
	DefaultRedisLease     = 2 * time.Second
)

// redisClients holds one client per Redis URL for the process, opened on
// first use.
var redisClients struct {
	mu sync.Mutex // guards byURL
	by map[string]*redis.Client
}

// RedisClient is the process's shared client for url; an unreachable
// Redis is an error naming IDEMCHECK_REDIS_URL.
func RedisClient(url string) (*redis.Client, error) {
	redisClients.mu.Lock()
	defer redisClients.mu.Unlock()
	if c, ok := redisClients.by[url]; ok {
		return c, nil
	}
	c, err := redisstore.Connect(context.Background(), url)
	if err != nil {
		return nil, err
	}
	if redisClients.by == nil {
		redisClients.by = map[string]*redis.Client{}
	}
	redisClients.by[url] = c
	return c, nil
}

// redisRun numbers the sequences of this process for their key prefixes.
var (
	redisRunID = uuid.NewString()[:8]
	redisSeq   atomic.Int64
)

// Redis is the reference provider (or a Redis store mutant) on the
// Redis store, in this process behind the InProcess wire: its decisions
// are ordered in the history as in memory, so every invariant is judged
// the same way, but Redis's TTLs are real, so time is too (the offset
// clock; the client's timeouts and the drawn faults scaled by TimeScale).
// Each sequence has its own key prefix, deleted by Close.
//
// A request drawn with a provider-crash fault is served by a provider
// process of its own, killed once it holds the key (its store calls fail
// from then on: a dead process sends nothing); the process serving every
// other request goes on, so that the kill takes no other request with it
// (the checker abandons the crashed request's key alone: a request killed
// beside it would hold its own key to the end of the lease unseen).
type Redis struct {
	retention time.Duration
	store     *redisstore.Store
	wire      *faults.InProcess

	mu        sync.Mutex // guards busy, cur, deadUntil
	busy      int        // requests inside the provider
	idle      *sync.Cond // signalled when busy drops to 0
	cur       *instance  // the provider process serving every request but a crashing one
	deadUntil time.Time  // real time by which every dead holder's lock has expired
}

// crashSlack is waited beyond a killed request's lease before time jumps
// (Settle), so that Redis has surely expired the lock by then
// (World.Killable).
const crashSlack = 50 * time.Millisecond

// NewRedis is the reference provider with Redis store mutant m's bugs (nil:
// none) on the Redis at url, keeping keys for retention and processing
// each request for processing (real time), recording into hist.
func NewRedis(url string, retention, processing time.Duration, m *mutants.Mutant, hist *models.History, now func() time.Time) (*Redis, error) {
	c, err := RedisClient(url)
	if err != nil {
		return nil, err
	}
	scfg := redisstore.Config{
		Client:      c,
		Prefix:      fmt.Sprintf("idemcheck:%s:%d:", redisRunID, redisSeq.Add(1)),
		Retention:   retention,
		Lease:       DefaultRedisLease,
		Unreachable: faults.StoreDown,
	}
	if m != nil && m.RedisStore != nil {
		m.RedisStore(&scfg)
	}
	store, err := redisstore.New(scfg)
	if err != nil {
		return nil, err
	}
	b := &Redis{retention: retention, store: store}
	b.idle = sync.NewCond(&b.mu)
	b.wire = &faults.InProcess{History: hist, Processing: processing, Now: now}
	b.cur = b.start()
	b.wire.Handler = http.HandlerFunc(b.serve)
	return b, nil
}

// start starts a provider process over the store.
func (b *Redis) start() *instance {
	in := &instance{}
	in.prov = provider.New(provider.Config{
		Retention: b.retention, Now: b.wire.Now, Store: fenced{b.store, in},
		BeforeCommit: func(r *http.Request) {
			b.wire.BeforeCommit(r)
			if faults.ProviderCrash(r.Context()) {
				b.kill(in)
			}
		},
	})
	return in
}

// kill kills in, the process of one crashing request, while it holds a
// key.
func (b *Redis) kill(in *instance) {
	in.dead.Store(true)
	b.mu.Lock()
	defer b.mu.Unlock()
	if until := time.Now().Add(DefaultRedisLease + crashSlack); until.After(b.deadUntil) {
		b.deadUntil = until
	}
}

// serve counts the request while the provider process serving it works.
func (b *Redis) serve(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	b.busy++
	in := b.cur
	if faults.ProviderCrash(r.Context()) {
		in = b.start() // a process of its own, to be killed alone
	}
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		if b.busy--; b.busy == 0 {
			b.idle.Broadcast()
		}
		b.mu.Unlock()
	}()
	in.prov.ServeHTTP(w, r)
}

// quiesce returns once the provider works on no request: before time
// jumps, what it was charging has landed (as for a remote provider).
func (b *Redis) quiesce() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.busy > 0 {
		b.idle.Wait()
	}
}

// Settle is quiesce, then the wait until every lock a killed process held
// has expired in Redis: before time jumps, as it would in the time that
// passes.
func (b *Redis) Settle() {
	b.quiesce()
	b.mu.Lock()
	until := b.deadUntil
	b.mu.Unlock()
	if d := time.Until(until); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		<-t.C
	}
}

func (b *Redis) Wire() http.RoundTripper { return b.wire }
func (b *Redis) BaseURL() string         { return "http://provider.idemcheck.invalid" }

// Charges reads merchant A's ledger from Redis: every charge but merchant
// B's, in creation order (the client's account is whatever its requests
// carry).
func (b *Redis) Charges() ([]models.Charge, error) {
	return ledgerRead(func(ctx context.Context) ([]models.Charge, error) {
		all, err := b.store.Charges(ctx)
		if err != nil {
			return nil, err
		}
		other, err := b.store.AccountCharges(ctx, accountB())
		return slices.DeleteFunc(all, func(ch models.Charge) bool {
			return slices.ContainsFunc(other, func(o models.Charge) bool { return o.ID == ch.ID })
		}), err
	})
}

// OtherCharges is merchant B's ledger in Redis (the accounts capability:
// the store keeps its ledger per account).
func (b *Redis) OtherCharges() ([]models.Charge, error) {
	return ledgerRead(func(ctx context.Context) ([]models.Charge, error) { return b.store.AccountCharges(ctx, accountB()) })
}

// Refunds reads every refund from Redis (refundBackend: the refund action
// and the refund invariants run on the Redis store too).
func (b *Redis) Refunds() ([]models.Refund, error) {
	return ledgerRead(b.store.Refunds)
}

// ledgerRead reads one part of the ledger within 10 s; its error names
// the Redis the run uses.
func ledgerRead[E any](read func(context.Context) ([]E, error)) ([]E, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	es, err := read(ctx)
	if err != nil {
		return nil, fmt.Errorf("redis (%s): reading the ledger: %w", redisstore.EnvURL, err)
	}
	return es, nil
}

// Close waits for the provider's work to end and deletes the sequence's
// keys.
func (b *Redis) Close() error {
	b.quiesce()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return b.store.Clear(ctx)
}

// instance is one provider process over the store.
type instance struct {
	prov *provider.Provider
	dead atomic.Bool // killed: its store calls fail
}

// errDead is every store call of a killed provider process.
var errDead = errors.New("the provider process was killed")

// fenced is the store as one provider process reaches it: nothing once
// the process is dead.
type fenced struct {
	provider.Store
	in *instance
}

func (f fenced) Take(ctx context.Context, key, fp string) (provider.Taken, error) {
	if f.in.dead.Load() {
		return provider.Taken{}, errDead
	}
	return f.Store.Take(ctx, key, fp)
}

func (f fenced) Finish(ctx context.Context, t provider.Taken, r provider.Stored) error {
	if f.in.dead.Load() {
		return errDead
	}
	return f.Store.Finish(ctx, t, r)
}

func (f fenced) Release(ctx context.Context, t provider.Taken) error {
	if f.in.dead.Load() {
		return errDead
	}
	return f.Store.Release(ctx, t)
}

func (f fenced) AddCharge(ctx context.Context, account string, ch models.Charge) (models.Charge, error) {
	if f.in.dead.Load() {
		return ch, errDead
	}
	return f.Store.AddCharge(ctx, account, ch)
}

func (f fenced) CommitCharge(ctx context.Context, t provider.Taken, account string, ch models.Charge) (provider.Stored, provider.CommitVerdict, error) {
	if f.in.dead.Load() {
		return provider.Stored{}, provider.CommitUnstored, errDead
	}
	return f.Store.CommitCharge(ctx, t, account, ch)
}

func (f fenced) CommitDecline(ctx context.Context, t provider.Taken, d provider.Stored) (provider.Stored, provider.CommitVerdict, error) {
	if f.in.dead.Load() {
		return provider.Stored{}, provider.CommitUnstored, errDead
	}
	return f.Store.CommitDecline(ctx, t, d)
}

func (f fenced) CommitRefund(ctx context.Context, t provider.Taken, account string, re models.Refund, noCharge, tooLarge provider.Stored) (provider.Stored, provider.CommitVerdict, error) {
	if f.in.dead.Load() {
		return provider.Stored{}, provider.CommitUnstored, errDead
	}
	return f.Store.CommitRefund(ctx, t, account, re, noCharge, tooLarge)
}

func (f fenced) AddRefund(ctx context.Context, account string, re models.Refund) (models.Refund, provider.RefundVerdict, error) {
	if f.in.dead.Load() {
		return re, provider.RefundMade, errDead
	}
	return f.Store.AddRefund(ctx, account, re)
}

func (f fenced) NextDecline(ctx context.Context) (int, error) {
	if f.in.dead.Load() {
		return 0, errDead
	}
	return f.Store.NextDecline(ctx)
}
