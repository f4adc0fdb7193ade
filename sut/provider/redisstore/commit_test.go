package redisstore_test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/provider"
	"github.com/idemcheck/idemcheck/sut/provider/redisstore"
)

// replyLosingProxy is a loopback TCP proxy to Redis that loses the reply
// to the nth command (from 1; a NOSCRIPT error not counted) whose bytes,
// in lower case, hold pattern ("eval": a script; a key name): it closes the
// client's connection instead of forwarding it, as Redis going down right
// after a command does. Redis has run the command.
type replyLosingProxy struct {
	addr    string
	pattern []byte
	nth     int64
	scripts atomic.Int64
	lost    atomic.Bool
}

func startReplyLosingProxy(t *testing.T, redisAddr, pattern string, nth int64) *replyLosingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &replyLosingProxy{addr: ln.Addr().String(), pattern: []byte(pattern), nth: nth}
	var wg sync.WaitGroup
	t.Cleanup(func() { _ = ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.DialTimeout("tcp", redisAddr, 2*time.Second)
			if err != nil {
				_ = c.Close()
				continue
			}
			wg.Add(2)
			var armed atomic.Bool
			go func() { // client → Redis
				defer wg.Done()
				buf := make([]byte, 64<<10)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						if bytes.Contains(bytes.ToLower(buf[:n]), p.pattern) {
							armed.Store(true)
						}
						if _, werr := s.Write(buf[:n]); werr != nil {
							break
						}
					}
					if err != nil {
						break
					}
				}
				_ = s.Close()
			}()
			go func() { // Redis → client
				defer wg.Done()
				buf := make([]byte, 64<<10)
				for {
					n, err := s.Read(buf)
					if n > 0 {
						if armed.Swap(false) && !bytes.HasPrefix(buf[:n], []byte("-NOSCRIPT")) &&
							p.scripts.Add(1) == p.nth && p.lost.CompareAndSwap(false, true) {
							break // the reply is lost
						}
						if _, werr := c.Write(buf[:n]); werr != nil {
							break
						}
					}
					if err != nil {
						break
					}
				}
				_ = c.Close()
				_, _ = io.Copy(io.Discard, s)
			}()
		}
	}()
	return p
}

// throughLosingProxy is a client of IDEMCHECK_REDIS_URL's Redis reached
// through a replyLosingProxy losing the reply to the nth command holding
// pattern, with go-redis's retries (maxRetries; -1 for none).
func throughLosingProxy(t *testing.T, maxRetries int, pattern string, nth int64) (*redis.Client, *replyLosingProxy) {
	t.Helper()
	opt, err := redis.ParseURL(redisstore.URL())
	require.NoError(t, err)
	p := startReplyLosingProxy(t, opt.Addr, pattern, nth)
	opt.Addr, opt.MaxRetries = p.addr, maxRetries
	c := redis.NewClient(opt)
	t.Cleanup(func() { _ = c.Close() })
	return c, p
}

// A charge whose store reply is lost after Redis ran it is charged once:
// go-redis runs the script again on a new connection (it retries a
// command whose connection ended), and the commit script finds the key
// completed by this request. Before the charge and its response were one
// script, the retried charge script charged a second time.
func TestLostReplyRetriedByTheClientChargesOnce(t *testing.T) {
	c, p := throughLosingProxy(t, 3, "eval", 1)
	s := newStore(t, redisstore.Config{Client: c})
	first := post(t, provider.New(provider.Config{Store: s}), "k1", secret, charge("bookstore-1-a", "tok_visa"))
	require.True(t, p.lost.Load(), "the proxy lost a script's reply")
	require.Equal(t, http.StatusCreated, first.Code, first.Body.String())
	require.Len(t, charges(t, s), 1)

	again := post(t, provider.New(provider.Config{Store: s}), "k1", secret, charge("bookstore-1-a", "tok_visa"))
	assert.Equal(t, http.StatusCreated, again.Code)
	assert.Equal(t, first.Body.String(), again.Body.String(), "the replay is the first answer")
	assert.Len(t, charges(t, s), 1)
}

// A charge whose store reply is lost, with no retry by the Redis client,
// is answered 503, but the key holds the charge's response: the shopper's
// retry under the key is a replay, not a second charge. Before, the
// charge stood in the ledger, the 503 released the key, and the retry
// charged again.
func TestLostReplyAnswered503IsReplayedNotChargedAgain(t *testing.T) {
	c, p := throughLosingProxy(t, -1, "eval", 1)
	s := newStore(t, redisstore.Config{Client: c})
	h := provider.New(provider.Config{Store: s})
	first := post(t, h, "k1", secret, charge("bookstore-1-a", "tok_visa"))
	require.True(t, p.lost.Load(), "the proxy lost a script's reply")
	require.Equal(t, http.StatusServiceUnavailable, first.Code, first.Body.String())

	again := post(t, h, "k1", secret, charge("bookstore-1-a", "tok_visa"))
	assert.Equal(t, http.StatusCreated, again.Code, again.Body.String())
	assert.Len(t, charges(t, s), 1)
}

// A refund whose store reply is lost is refunded once, whether go-redis
// runs the script again (maxRetries 3) or the provider answers 503 and the
// shopper retries the key (none): the refund and its answer are one
// script. Before, a retry refunded again.
func TestLostRefundReplyRefundsOnce(t *testing.T) {
	for _, retries := range []int{3, -1} {
		t.Run(fmt.Sprint("retries ", retries), func(t *testing.T) {
			c, p := throughLosingProxy(t, retries, "eval", 2) // the charge's script, then the refund's
			s := newStore(t, redisstore.Config{Client: c})
			h := provider.New(provider.Config{Store: s})
			ch := paid(t, h, "k1", secret, "bookstore-1-a")
			req := models.RefundRequest{Charge: ch.ID, Amount: 100, MerchantReference: "bookstore-1-a"}
			first := postRefund(h, "r1", secret, req)
			require.True(t, p.lost.Load(), "the proxy lost a script's reply")
			again := postRefund(h, "r1", secret, req)
			assert.Equal(t, http.StatusCreated, again.Code, again.Body.String())
			if first.Code == http.StatusCreated {
				assert.Equal(t, first.Body.String(), again.Body.String())
			}
			assert.Len(t, refunds(t, s), 1)
		})
	}
}

// A decline whose store reply is lost is replayed with its first id,
// whether go-redis runs the script again (retries 3: the first answer is
// the 402) or the provider answers 503 (none): the decline's number and
// its answer are one script. Before, the retry was declined again under
// another id (dc_000002), a replay that differs.
func TestLostDeclineReplyIsReplayed(t *testing.T) {
	for _, retries := range []int{3, -1} {
		t.Run(fmt.Sprint("retries ", retries), func(t *testing.T) {
			c, p := throughLosingProxy(t, retries, "decline-seq", 1) // INCR or the script, on decline-seq
			s := newStore(t, redisstore.Config{Client: c})
			h := provider.New(provider.Config{Store: s})
			first := post(t, h, "k1", secret, charge("bookstore-1-a", models.DeclinedCard))
			require.True(t, p.lost.Load(), "the proxy lost a script's reply")
			again := post(t, h, "k1", secret, charge("bookstore-1-a", models.DeclinedCard))
			assert.Equal(t, http.StatusPaymentRequired, again.Code, again.Body.String())
			assert.Contains(t, again.Body.String(), `"decline_id":"dc_000001"`)
			if first.Code == http.StatusPaymentRequired {
				assert.Equal(t, first.Body.String(), again.Body.String())
			}
			assert.Empty(t, charges(t, s))
		})
	}
}

// A charge that outlives its lease, while another request holds the key,
// charges nothing and is answered 409: the commit is fenced by the
// request's own marker. Once the other request completed the key with the
// same body, the late one answers its replay. Under the LeaseTooShort bug
// it is not fenced, and the key is charged twice.
func TestChargeFencedOutByAnExpiredLease(t *testing.T) {
	paidCharge := models.Charge{Amount: 54890, Currency: "TRY", Status: "succeeded", MerchantReference: "bookstore-1-a"}
	for _, tc := range []struct {
		name      string
		planted   redisstore.Planted
		completed bool // the other request completed the key before the late one commits
		want      provider.CommitVerdict
		charges   int
	}{
		{"reference, the other in flight", redisstore.Planted{}, false, provider.CommitFenced, 0},
		{"reference, the other completed", redisstore.Planted{}, true, provider.CommitStored, 1},
		{"lease-too-short", redisstore.Planted{LeaseTooShort: true}, true, provider.CommitStored, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := connect(t)
			s := newStore(t, redisstore.Config{Client: c, Lease: time.Second, Planted: tc.planted})
			late, err := s.Take(t.Context(), "acct:k1", "fp")
			require.NoError(t, err)
			require.NoError(t, c.Del(t.Context(), s.Prefix()+"idem:acct:k1").Err()) // the lease ran out
			other, err := s.Take(t.Context(), "acct:k1", "fp")
			require.NoError(t, err)
			require.Equal(t, provider.TakeProcess, other.Verdict)
			var first provider.Stored
			if tc.completed {
				first, _, err = s.CommitCharge(t.Context(), other, "acct", paidCharge)
				require.NoError(t, err)
			}

			got, v, err := s.CommitCharge(t.Context(), late, "acct", paidCharge)
			require.NoError(t, err)
			assert.Equal(t, tc.want, v)
			if tc.completed && tc.charges == 1 {
				assert.Equal(t, string(first.Body), string(got.Body), "the late request answers the replay")
			}
			assert.Len(t, charges(t, s), tc.charges)
		})
	}
}
