package redisstore_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/provider"
	"github.com/idemcheck/idemcheck/sut/provider/redisstore"
)

const secret = "Bearer sk_test_redisstore_secret"

// connect opens the Redis of IDEMCHECK_REDIS_URL for t, failing (never
// skipping) with the variable's name when it does not answer.
func connect(t *testing.T) *redis.Client {
	t.Helper()
	c, err := redisstore.Connect(t.Context(), redisstore.URL())
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// newStore is a store under a prefix of t's own, deleted when t ends.
func newStore(t *testing.T, cfg redisstore.Config) *redisstore.Store {
	t.Helper()
	if cfg.Client == nil {
		cfg.Client = connect(t)
	}
	if cfg.Prefix == "" {
		cfg.Prefix = "idemcheck-test:" + uuid.NewString() + ":"
		t.Cleanup(func() { require.NoError(t, redisstore.Clear(context.Background(), cfg.Client, cfg.Prefix)) })
	}
	s, err := redisstore.New(cfg)
	require.NoError(t, err)
	return s
}

func charge(ref, source string) models.ChargeRequest {
	return models.ChargeRequest{Amount: 54890, Currency: "TRY", Source: source, Description: "Bookstore order 1", MerchantReference: ref}
}

func post(t *testing.T, h http.Handler, key, auth string, req models.ChargeRequest) *httptest.ResponseRecorder {
	t.Helper()
	return send(h, "/v1/charges", key, auth, req)
}

// send POSTs body's JSON to path under key as account auth (none when
// ""); it may run on another goroutine than the test's.
func send(h http.Handler, path, key, auth string, body any) *httptest.ResponseRecorder {
	raw, _ := json.Marshal(body) // a request body: plain fields, always marshals
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(string(raw)))
	r.Header.Set("Content-Type", "application/json")
	if auth != "" {
		r.Header.Set("Authorization", auth)
	}
	r.Header.Set(models.IdempotencyKeyHeader, models.FormatKey(key))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// find is the body of GET target as account auth.
func find(h http.Handler, target, auth string) string {
	r := httptest.NewRequest(http.MethodGet, target, nil)
	r.Header.Set("Authorization", auth)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Body.String()
}

func charges(t *testing.T, s *redisstore.Store) []models.Charge {
	t.Helper()
	cs, err := s.Charges(t.Context())
	require.NoError(t, err)
	return cs
}

// values reads every key under s's prefix with its value and PTTL.
func values(t *testing.T, c *redis.Client, s *redisstore.Store) map[string]string {
	t.Helper()
	keys, err := c.Keys(t.Context(), s.Prefix()+"*").Result()
	require.NoError(t, err)
	out := map[string]string{}
	for _, k := range keys {
		if typ, _ := c.Type(t.Context(), k).Result(); typ == "string" {
			out[k] = c.Get(t.Context(), k).Val()
		}
	}
	return out
}

func idemKeys(t *testing.T, c *redis.Client, s *redisstore.Store) []string {
	t.Helper()
	keys, err := c.Keys(t.Context(), s.Prefix()+"idem:*").Result()
	require.NoError(t, err)
	return keys
}

func TestReplayAfterRestartOverTheSameRedis(t *testing.T) {
	c := connect(t)
	s := newStore(t, redisstore.Config{Client: c})
	first := post(t, provider.New(provider.Config{Store: s}), "k1", secret, charge("bookstore-1-a", "tok_visa"))
	require.Equal(t, http.StatusCreated, first.Code, first.Body.String())
	assert.Empty(t, first.Header().Get(models.ReplayedHeader))

	// A new provider process over the same prefix: keys and ledger survive.
	s2 := newStore(t, redisstore.Config{Client: c, Prefix: s.Prefix()})
	restarted := provider.New(provider.Config{Store: s2})
	again := post(t, restarted, "k1", secret, charge("bookstore-1-a", "tok_visa"))
	assert.Equal(t, http.StatusCreated, again.Code)
	assert.Equal(t, "true", again.Header().Get(models.ReplayedHeader))
	assert.Equal(t, "application/json", again.Header().Get("Content-Type"))
	assert.Equal(t, first.Body.String(), again.Body.String(), "the stored body, byte for byte")
	require.Len(t, charges(t, s2), 1)
	assert.Equal(t, "ch_000001", charges(t, s2)[0].ID)
	assert.Len(t, restarted.Charges(), 1)

	assert.Contains(t, find(restarted, "/v1/charges?merchant_reference=bookstore-1-a", secret), `"id":"ch_000001"`)
}

func TestMismatchAndDeclineReplay(t *testing.T) {
	s := newStore(t, redisstore.Config{})
	p := provider.New(provider.Config{Store: s})
	d1 := post(t, p, "k1", secret, charge("bookstore-1-a", models.DeclinedCard))
	require.Equal(t, http.StatusPaymentRequired, d1.Code)
	d2 := post(t, p, "k1", secret, charge("bookstore-1-a", models.DeclinedCard))
	assert.Equal(t, d1.Body.String(), d2.Body.String(), "a decline is stored and replayed")
	assert.Equal(t, http.StatusUnprocessableEntity, post(t, p, "k1", secret, charge("bookstore-1-a", "tok_visa")).Code)
	assert.Empty(t, charges(t, s))
}

// TestInFlightIsConflict: while the first request holds the key, a second
// one with it gets 409 and nothing is charged or refunded twice; on both
// endpoints.
func TestInFlightIsConflict(t *testing.T) {
	for _, path := range []string{"/v1/charges", models.RefundsPath} {
		t.Run(path, func(t *testing.T) {
			s := newStore(t, redisstore.Config{})
			inside, release := make(chan struct{}), make(chan struct{})
			p := provider.New(provider.Config{Store: s, BeforeCommit: func(r *http.Request) {
				if r.URL.Path == path {
					close(inside)
					<-release
				}
			}})
			var body any = charge("bookstore-1-a", "tok_visa")
			if path == models.RefundsPath {
				body = models.RefundRequest{Charge: paid(t, p, "c1", secret, "bookstore-1-a").ID, Amount: 100, MerchantReference: "refund-1-a"}
			}
			done := make(chan int, 1)
			go func() { done <- send(p, path, "k1", secret, body).Code }()
			select { // bounded: a first request that never reaches processing answers instead
			case <-inside:
			case code := <-done:
				t.Fatalf("the first request was answered %d without being processed", code)
			}
			second := send(p, path, "k1", secret, body)
			close(release)
			assert.Equal(t, http.StatusConflict, second.Code)
			assert.Equal(t, http.StatusCreated, <-done)
			assert.Len(t, charges(t, s), 1)
			if path == models.RefundsPath {
				assert.Len(t, refunds(t, s), 1)
			}
		})
	}
}

// TestRecordsAreScopedAndHoldNoCredentials: the same key under two
// accounts is two keys, and no stored value holds the Authorization.
func TestRecordsAreScopedAndHoldNoCredentials(t *testing.T) {
	c := connect(t)
	s := newStore(t, redisstore.Config{Client: c})
	p := provider.New(provider.Config{Store: s})
	require.Equal(t, http.StatusCreated, post(t, p, "k1", secret, charge("bookstore-1-a", "tok_visa")).Code)
	require.Equal(t, http.StatusCreated, post(t, p, "k1", secret+"2", charge("bookstore-1-a", "tok_visa")).Code)
	assert.Len(t, charges(t, s), 2, "two accounts, two charges")
	assert.Len(t, idemKeys(t, c, s), 2)
	for k, v := range values(t, c, s) {
		assert.NotContains(t, k, "sk_test")
		assert.NotContains(t, v, "sk_test", "a stored record holds the credential")
	}
}

// TestTTLs: the marker lives for the lease, the response for the
// retention window (read with PTTL: nothing waits for Redis's clock).
func TestTTLs(t *testing.T) {
	c := connect(t)
	s := newStore(t, redisstore.Config{Client: c, Lease: 2 * time.Second, Retention: time.Hour})
	p := provider.New(provider.Config{Store: s, BeforeCommit: func(r *http.Request) {
		keys := idemKeys(t, c, s)
		if assert.Len(t, keys, 1) {
			ttl := c.PTTL(t.Context(), keys[0]).Val()
			assert.True(t, ttl > 0 && ttl <= 2*time.Second, "marker PTTL %s: the lease", ttl)
		}
	}})
	require.Equal(t, http.StatusCreated, post(t, p, "k1", secret, charge("bookstore-1-a", "tok_visa")).Code)
	ttl := c.PTTL(t.Context(), idemKeys(t, c, s)[0]).Val()
	assert.True(t, ttl > 59*time.Minute && ttl <= time.Hour, "response PTTL %s: the retention", ttl)
	_, err := redisstore.New(redisstore.Config{Client: c, Prefix: "x:", Lease: time.Hour, Retention: time.Hour})
	assert.ErrorContains(t, err, "shorter than the retention")
}

// TestUnreachableStoreProcessesNothing: with the key store unreachable the
// provider answers 503, charges nothing and leaves no key.
func TestUnreachableStoreProcessesNothing(t *testing.T) {
	c := connect(t)
	s := newStore(t, redisstore.Config{Client: c, Unreachable: func(context.Context) bool { return true }})
	w := post(t, provider.New(provider.Config{Store: s}), "k1", secret, charge("bookstore-1-a", "tok_visa"))
	assert.Equal(t, http.StatusServiceUnavailable, w.Code)
	assert.Equal(t, "1", w.Header().Get("Retry-After"))
	assert.Empty(t, charges(t, s))
	assert.Empty(t, idemKeys(t, c, s))
}

// TestQueuedRequestOfAGoneClientIsNotRun: a request whose client hung up
// while it waited for the store is not processed and leaves no key.
func TestQueuedRequestOfAGoneClientIsNotRun(t *testing.T) {
	c := connect(t)
	ctx, cancel := context.WithCancel(t.Context())
	s := newStore(t, redisstore.Config{Client: c, Unreachable: func(context.Context) bool { cancel(); return false }})
	raw, _ := json.Marshal(charge("bookstore-1-a", "tok_visa"))
	r := httptest.NewRequestWithContext(ctx, http.MethodPost, "/v1/charges", strings.NewReader(string(raw)))
	r.Header.Set(models.IdempotencyKeyHeader, models.FormatKey("k1"))
	provider.New(provider.Config{Store: s}).ServeHTTP(httptest.NewRecorder(), r)
	assert.Empty(t, charges(t, s))
	assert.Empty(t, idemKeys(t, c, s))
}

func TestClearDeletesThePrefix(t *testing.T) {
	c := connect(t)
	prefix := "idemcheck-test:" + uuid.NewString() + ":"
	s := newStore(t, redisstore.Config{Client: c, Prefix: prefix})
	require.Equal(t, http.StatusCreated, post(t, provider.New(provider.Config{Store: s}), "k1", secret, charge("bookstore-1-a", "tok_visa")).Code)
	require.NoError(t, s.Clear(t.Context()))
	keys, err := c.Keys(t.Context(), prefix+"*").Result()
	require.NoError(t, err)
	assert.Empty(t, keys)
}
