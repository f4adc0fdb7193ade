package redisstore_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/provider"
	"github.com/idemcheck/idemcheck/sut/provider/redisstore"
)

func refunds(t *testing.T, s *redisstore.Store) []models.Refund {
	t.Helper()
	rs, err := s.Refunds(t.Context())
	require.NoError(t, err)
	return rs
}

// TestRefundKeysAreTheirOwnOnRedis: one key used on /v1/charges and then
// on /v1/refunds is two Redis keys, the refund's under "refunds/", each
// with the retention TTL and neither holding the credential.
func TestRefundKeysAreTheirOwnOnRedis(t *testing.T) {
	c := connect(t)
	s := newStore(t, redisstore.Config{Client: c, Retention: time.Hour})
	p := provider.New(provider.Config{Store: s})
	ch := paid(t, p, "k1", secret, "bookstore-1-a")
	require.Equal(t, http.StatusCreated, postRefund(p, "k1", secret, models.RefundRequest{Charge: ch.ID, Amount: 1, MerchantReference: "refund-1-a"}).Code)
	keys := idemKeys(t, c, s)
	require.Len(t, keys, 2)
	refundKeys := 0
	for _, k := range keys {
		if strings.HasPrefix(k, s.Prefix()+"idem:refunds/") {
			refundKeys++
		}
		ttl := c.PTTL(t.Context(), k).Val()
		assert.True(t, ttl > 59*time.Minute && ttl <= time.Hour, "%s: PTTL %s, the retention", k, ttl)
	}
	assert.Equal(t, 1, refundKeys)
	for k, v := range values(t, c, s) {
		assert.NotContains(t, k+v, "sk_test", "a stored value holds the credential")
	}
}

// TestRefundReplayAfterRestartOverTheSameRedis: a provider restarted over
// the prefix replays the refund and still lists it.
func TestRefundReplayAfterRestartOverTheSameRedis(t *testing.T) {
	c := connect(t)
	s := newStore(t, redisstore.Config{Client: c})
	p := provider.New(provider.Config{Store: s})
	req := models.RefundRequest{Charge: paid(t, p, "c1", secret, "bookstore-1-a").ID, Amount: 100, MerchantReference: "refund-1-a"}
	first := postRefund(p, "r1", secret, req)
	require.Equal(t, http.StatusCreated, first.Code)

	restarted := provider.New(provider.Config{Store: newStore(t, redisstore.Config{Client: c, Prefix: s.Prefix()})})
	again := postRefund(restarted, "r1", secret, req)
	assert.Equal(t, "true", again.Header().Get(models.ReplayedHeader))
	assert.Equal(t, first.Body.String(), again.Body.String())
	assert.Contains(t, find(restarted, "/v1/refunds?merchant_reference=refund-1-a", secret), `"id":"re_000001"`)
	assert.Len(t, restarted.Refunds(), 1)
}

// TestRefundsNeverExceedTheChargeAcrossInstances: two provider instances
// over one prefix refund one charge of 54890 in 10000s under 20 keys at
// once: exactly five are made (50000), the other fifteen are 402, and the
// ids are re_000001 to re_000005.
func TestRefundsNeverExceedTheChargeAcrossInstances(t *testing.T) {
	c := connect(t)
	s := newStore(t, redisstore.Config{Client: c})
	instances := []*provider.Provider{
		provider.New(provider.Config{Store: s}),
		provider.New(provider.Config{Store: newStore(t, redisstore.Config{Client: connect(t), Prefix: s.Prefix()})}),
	}
	ch := paid(t, instances[0], "c1", secret, "bookstore-1-a")
	codes := make(chan int, 20)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := models.RefundRequest{Charge: ch.ID, Amount: 10000, MerchantReference: "refund-1-" + string(rune('a'+i))}
			codes <- postRefund(instances[i%2], "r"+string(rune('a'+i)), secret, req).Code
		}()
	}
	wg.Wait()
	close(codes)
	count := map[int]int{}
	for code := range codes {
		count[code]++
	}
	assert.Equal(t, map[int]int{http.StatusCreated: 5, http.StatusPaymentRequired: 15}, count)
	var ids []string
	var total int64
	for _, re := range refunds(t, s) {
		ids, total = append(ids, re.ID), total+re.Amount
	}
	assert.Equal(t, []string{"re_000001", "re_000002", "re_000003", "re_000004", "re_000005"}, ids)
	assert.Equal(t, int64(50000), total)
}

// TestRefundAmountsAreExactBeyondFloats: what is left of a charge is
// counted in Redis's int64, not Lua's doubles: of 2^53+1, refunding 2^53
// leaves exactly 1.
func TestRefundAmountsAreExactBeyondFloats(t *testing.T) {
	s := newStore(t, redisstore.Config{})
	p := provider.New(provider.Config{Store: s})
	big := charge("bookstore-1-a", "tok_visa")
	big.Amount = 1<<53 + 1
	w := post(t, p, "c1", secret, big)
	require.Equal(t, http.StatusCreated, w.Code, w.Body.String())
	id := charges(t, s)[0].ID
	refund := func(key string, amount int64) int {
		return postRefund(p, key, secret, models.RefundRequest{Charge: id, Amount: amount, MerchantReference: "refund-" + key}).Code
	}
	assert.Equal(t, http.StatusCreated, refund("r1", 1<<53))
	assert.Equal(t, http.StatusPaymentRequired, refund("r2", 2))
	assert.Equal(t, http.StatusCreated, refund("r3", 1))
	assert.Equal(t, http.StatusPaymentRequired, refund("r4", 1))
}
