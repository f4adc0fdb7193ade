// Package redisstore is the reference provider's idempotency store and
// ledger on Redis, as seed article 004 builds it ("Store olarak Redis
// kullanıyorum, hızlı ve TTL native"): the key is taken with
// `SET key <in-flight marker> NX PX <lease>`, the request is processed,
// then the full response (status, Content-Type, body) replaces the marker
// with the retention TTL (`SET key <response> PX <retention>`); a request
// that finds the marker gets 409, one that finds the response a replay.
// A charge and its response are written by one Lua script that first
// checks the marker is still this request's (commit.go): article 004
// writes them one after the other, and a provider killed, or a reply
// lost, between the two let a retry charge again after the lease.
// The lease is the marker's own and much shorter than the retention: a
// provider killed while it holds a key blocks it for the lease, not for
// the whole window. POST /v1/refunds takes its keys the same way, under
// idem:refunds/<account>:<key>, so that a charge's key is another key
// there.
//
// The charges and refunds (the ledger, ledger.go) live in the same Redis
// under the same prefix, so that they survive a provider restart as the
// keys do: a replay must never name a charge the provider no longer
// holds. Every key the store writes starts with Config.Prefix; Clear
// deletes them.
//
// A Store is safe for concurrent use, also by several providers (one per
// instance or per restart) over one prefix.
package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/idemcheck/idemcheck/sut/provider"
)

// EnvURL is the environment variable naming the Redis server; DefaultURL
// is used when it is unset.
const (
	EnvURL     = "IDEMCHECK_REDIS_URL"
	DefaultURL = "redis://127.0.0.1:6379/0"
)

// Defaults of Config.
const (
	// DefaultLease is the in-flight marker's lease: 30 s, longer than any
	// processing the reference provider does, far shorter than 24 h.
	DefaultLease = 30 * time.Second
	// DefaultRetention is the stored response's TTL: 24 h (article 004,
	// "Stripe 24 saat kullanıyor").
	DefaultRetention = provider.DefaultRetention
)

// Config configures a Store.
type Config struct {
	// Client is the Redis connection; the caller closes it. Required.
	Client *redis.Client
	// Prefix starts every key the store writes, e.g. "idemcheck:<run>:";
	// required, so that runs never see each other's data.
	Prefix string
	// Retention is how long a completed key's response is kept (PX, in
	// milliseconds); default 24h.
	Retention time.Duration
	// Lease is how long the in-flight marker holds a key (PX); default
	// 30s. It must be shorter than Retention.
	Lease time.Duration
	// Unreachable, if set, is asked with the request's context before each
	// command on the keys: true makes the command fail as against a Redis
	// that cannot be reached (the fault layer's store-down), without
	// sending it. The ledger is not affected: it stands for the payment
	// database beside the key store.
	Unreachable func(ctx context.Context) bool
	// Planted switches on deliberate bugs; only sut/mutants sets it.
	Planted Planted
}

// URL is the Redis URL from EnvURL, or DefaultURL.
func URL() string {
	if u := os.Getenv(EnvURL); u != "" {
		return u
	}
	return DefaultURL
}

// Connect opens a client for url and checks within 2 s that Redis answers
// PING; the error names EnvURL and says how to start Redis.
func Connect(ctx context.Context, url string) (*redis.Client, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("redisstore: %s=%q is not a Redis URL: %v", EnvURL, url, err)
	}
	opt.MaxRetries = -1 // a failed command fails once: the provider answers 503 rather than wait
	c := redis.NewClient(opt)
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := c.Ping(pctx).Err(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("redisstore: Redis at %s (%s) does not answer: %v; start it with `redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save '' --appendonly no` or point %s at one", opt.Addr, EnvURL, err, EnvURL)
	}
	return c, nil
}

// ErrUnreachable is the error of a command Config.Unreachable refused.
var ErrUnreachable = errors.New("redisstore: dial tcp: connection refused (store unreachable)")

// Store is a provider.Store on Redis.
type Store struct {
	c         *redis.Client
	prefix    string
	retention time.Duration
	lease     time.Duration
	down      func(context.Context) bool
	planted   Planted
}

var _ provider.Store = (*Store)(nil)

// New returns a Store configured by cfg.
func New(cfg Config) (*Store, error) {
	if cfg.Client == nil || cfg.Prefix == "" {
		return nil, errors.New("redisstore: Config.Client and Config.Prefix are required")
	}
	s := &Store{c: cfg.Client, prefix: cfg.Prefix, retention: cfg.Retention, lease: cfg.Lease, down: cfg.Unreachable, planted: cfg.Planted}
	if s.retention <= 0 {
		s.retention = DefaultRetention
	}
	if s.lease <= 0 {
		s.lease = DefaultLease
	}
	if s.lease >= s.retention {
		return nil, fmt.Errorf("redisstore: the lease (%s) must be shorter than the retention (%s)", s.lease, s.retention)
	}
	return s, nil
}

// Prefix is the prefix of every key the store writes.
func (s *Store) Prefix() string { return s.prefix }

// record is the value under a key: the in-flight marker, or the stored
// response. It holds the request's fingerprint, never its credentials.
type record struct {
	State       string    `json:"state"` // "in-flight" or "completed"
	Fingerprint string    `json:"fingerprint"`
	Token       string    `json:"token,omitempty"`
	Response    *response `json:"response,omitempty"`
}

// response is a stored response in a record: the body as a JSON string,
// not base64, so that the commit script (commit.go) can write it.
type response struct {
	Status      int    `json:"status"`
	ContentType string `json:"content_type"`
	Body        string `json:"body"`
}

func (r *response) stored() provider.Stored {
	return provider.Stored{Status: r.Status, ContentType: r.ContentType, Body: []byte(r.Body)}
}

const (
	stateInFlight  = "in-flight"
	stateCompleted = "completed"
)

func (s *Store) keyOf(key string) string { return s.prefix + "idem:" + key }

func (s *Store) unreachable(ctx context.Context) error {
	if s.down != nil && s.down(ctx) {
		return ErrUnreachable
	}
	return nil
}

// Take claims key with SET NX PX lease; when the key exists it reads it
// and answers mismatch, in flight or replay (a key that expires between
// the two is claimed again, up to 3 times, then answered in flight).
func (s *Store) Take(ctx context.Context, key, fingerprint string) (provider.Taken, error) {
	if err := s.unreachable(ctx); err != nil {
		return s.plantedTakeError(key, fingerprint, err) // planted bug: ProcessWithoutLock
	}
	if s.planted.GetThenSet {
		return s.getThenSet(ctx, key, fingerprint)
	}
	k := s.keyOf(key)
	for try := 0; try < 3; try++ {
		marker := record{State: stateInFlight, Fingerprint: fingerprint, Token: uuid.NewString()}
		raw, _ := json.Marshal(marker) // a record always marshals
		err := s.c.Do(ctx, "SET", k, raw, "NX", "PX", s.markerLeaseMillis()).Err()
		if err == nil {
			return provider.Taken{Verdict: provider.TakeProcess, Key: key, Fingerprint: fingerprint, Token: string(raw)}, nil
		}
		if !errors.Is(err, redis.Nil) {
			return s.plantedTakeError(key, fingerprint, err) // planted bug: ProcessWithoutLock
		}
		t, found, err := s.look(ctx, key, fingerprint)
		if err != nil || found {
			return t, err
		}
	}
	return provider.Taken{Verdict: provider.TakeInFlight, Key: key, Fingerprint: fingerprint}, nil
}

// look reads key and decides for a request with fingerprint; found is
// false when the key is absent.
func (s *Store) look(ctx context.Context, key, fingerprint string) (_ provider.Taken, found bool, _ error) {
	raw, err := s.c.Get(ctx, s.keyOf(key)).Bytes()
	if errors.Is(err, redis.Nil) {
		return provider.Taken{}, false, nil
	}
	if err != nil {
		return provider.Taken{}, false, err
	}
	var rec record
	if err := json.Unmarshal(raw, &rec); err != nil {
		return provider.Taken{}, false, fmt.Errorf("redisstore: %s holds no record: %v", s.keyOf(key), err)
	}
	t := provider.Taken{Key: key, Fingerprint: fingerprint}
	switch {
	case rec.Fingerprint != fingerprint:
		t.Verdict = provider.TakeMismatch
	case rec.State != stateCompleted || rec.Response == nil:
		t.Verdict = provider.TakeInFlight
	default:
		t.Verdict, t.Stored = provider.TakeReplay, rec.Response.stored()
	}
	return t, true, nil
}

// Finish replaces the marker with the response, for the retention window
// (SET key response PX retention, in milliseconds).
func (s *Store) Finish(ctx context.Context, t provider.Taken, r provider.Stored) error {
	if err := s.unreachable(ctx); err != nil {
		return err
	}
	raw, _ := json.Marshal(record{State: stateCompleted, Fingerprint: t.Fingerprint, Response: &response{r.Status, r.ContentType, string(r.Body)}})
	return s.c.Do(ctx, "SET", s.keyOf(t.Key), raw, "PX", s.retentionMillis()).Err()
}

// releaseScript deletes KEYS[1] only if it still holds this request's
// marker (ARGV[1]): a lease that ran out may have let another request in.
var releaseScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)

// Release deletes t's marker if the key still holds it.
func (s *Store) Release(ctx context.Context, t provider.Taken) error {
	if t.Token == "" {
		return nil
	}
	if err := s.unreachable(ctx); err != nil {
		return err
	}
	return releaseScript.Run(ctx, s.c, []string{s.keyOf(t.Key)}, t.Token).Err()
}

// Clear deletes every key under the prefix (SCAN MATCH prefix*, DEL), at
// most 1000 rounds of 1000 keys.
func (s *Store) Clear(ctx context.Context) error { return Clear(ctx, s.c, s.prefix) }

// Clear deletes every key of c under prefix, at most 1000 rounds of 1000.
func Clear(ctx context.Context, c *redis.Client, prefix string) error {
	var cursor uint64
	for round := 0; round < 1000; round++ {
		keys, next, err := c.Scan(ctx, cursor, prefix+"*", 1000).Result()
		if err != nil {
			return err
		}
		if len(keys) > 0 {
			if err := c.Del(ctx, keys...).Err(); err != nil {
				return err
			}
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
	return errors.New("redisstore: too many keys under " + strconv.Quote(prefix))
}
