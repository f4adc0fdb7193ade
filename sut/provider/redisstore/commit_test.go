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
// to the nth script Redis ran (EVAL or EVALSHA, not a NOSCRIPT error;
// from 1): it closes the client's connection instead of forwarding it, as
// Redis going down right after a command does. Redis has run the script.
type replyLosingProxy struct {
	addr    string
	nth     int64
	scripts atomic.Int64
	lost    atomic.Bool
}

func startReplyLosingProxy(t *testing.T, redisAddr string, nth int64) *replyLosingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &replyLosingProxy{addr: ln.Addr().String(), nth: nth}
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
						if bytes.Contains(bytes.ToLower(buf[:n]), []byte("eval")) {
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
// through a replyLosingProxy losing the nth script's reply, with
// go-redis's retries (maxRetries; -1 for none).
func throughLosingProxy(t *testing.T, maxRetries int, nth int64) (*redis.Client, *replyLosingProxy) {
	t.Helper()
	opt, err := redis.ParseURL(redisstore.URL())
	require.NoError(t, err)
	p := startReplyLosingProxy(t, opt.Addr, nth)
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
	c, p := throughLosingProxy(t, 3, 1)
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
	c, p := throughLosingProxy(t, -1, 1)
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
			c, p := throughLosingProxy(t, retries, 2) // the charge's script, then the refund's
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

// A charge that outlives its lease, while another request took the key,
// charges nothing and is answered 409: the commit is fenced by the
// request's own marker. Under the LeaseTooShort bug it is not fenced, and
// the key is charged twice.
func TestChargeFencedOutByAnExpiredLease(t *testing.T) {
	for _, tc := range []struct {
		name    string
		planted redisstore.Planted
		charges int
	}{{"reference", redisstore.Planted{}, 1}, {"lease-too-short", redisstore.Planted{LeaseTooShort: true}, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			paidCharge := models.Charge{Amount: 54890, Currency: "TRY", Status: "succeeded", MerchantReference: "bookstore-1-a"}
			c := connect(t)
			s := newStore(t, redisstore.Config{Client: c, Lease: time.Second, Planted: tc.planted})
			taken, err := s.Take(t.Context(), "acct:k1", "fp")
			require.NoError(t, err)
			require.NoError(t, c.Del(t.Context(), s.Prefix()+"idem:acct:k1").Err()) // the lease ran out
			other, err := s.Take(t.Context(), "acct:k1", "fp")
			require.NoError(t, err)
			require.Equal(t, provider.TakeProcess, other.Verdict)
			_, v, err := s.CommitCharge(t.Context(), other, "acct", paidCharge)
			require.NoError(t, err)
			require.Equal(t, provider.CommitStored, v)

			_, v, err = s.CommitCharge(t.Context(), taken, "acct", paidCharge)
			require.NoError(t, err)
			if tc.charges == 1 {
				assert.Equal(t, provider.CommitFenced, v)
			}
			assert.Len(t, charges(t, s), tc.charges)
		})
	}
}
