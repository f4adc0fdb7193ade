package redisstore_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/sut/provider"
	"github.com/idemcheck/idemcheck/sut/provider/redisstore"
)

// markerTTL is the PTTL of the only key's in-flight marker, read while the
// request is being processed.
func markerTTL(t *testing.T, planted redisstore.Planted) time.Duration {
	t.Helper()
	c := connect(t)
	s := newStore(t, redisstore.Config{Client: c, Lease: 2 * time.Second, Retention: time.Hour, Planted: planted})
	var ttl time.Duration
	p := provider.New(provider.Config{Store: s, BeforeCommit: func(*http.Request) {
		keys := idemKeys(t, c, s)
		require.Len(t, keys, 1)
		ttl = c.PTTL(t.Context(), keys[0]).Val()
	}})
	require.Equal(t, http.StatusCreated, post(t, p, "k1", secret, charge("bookstore-1-a", "tok_visa")).Code)
	return ttl
}

func TestPlantedLeaseTooShort(t *testing.T) {
	assert.LessOrEqual(t, markerTTL(t, redisstore.Planted{LeaseTooShort: true}), redisstore.ShortLease)
}

func TestPlantedLockIsResponseTTL(t *testing.T) {
	assert.Greater(t, markerTTL(t, redisstore.Planted{LockIsResponseTTL: true}), 59*time.Minute, "the marker lives as long as a response")
}

func TestPlantedTTLSecondsAsMs(t *testing.T) {
	c := connect(t)
	s := newStore(t, redisstore.Config{Client: c, Retention: 10 * time.Hour, Planted: redisstore.Planted{TTLSecondsAsMs: true}})
	require.Equal(t, http.StatusCreated, post(t, provider.New(provider.Config{Store: s}), "k1", secret, charge("bookstore-1-a", "tok_visa")).Code)
	keys := idemKeys(t, c, s)
	require.Len(t, keys, 1)
	ttl := c.PTTL(t.Context(), keys[0]).Val()
	assert.True(t, ttl > 0 && ttl <= 36*time.Second, "PTTL %s: 10 h given as 36 000 ms", ttl)
}

func TestPlantedProcessWithoutLock(t *testing.T) {
	c := connect(t)
	s := newStore(t, redisstore.Config{Client: c, Unreachable: func(context.Context) bool { return true }, Planted: redisstore.Planted{ProcessWithoutLock: true}})
	assert.Equal(t, http.StatusCreated, post(t, provider.New(provider.Config{Store: s}), "k1", secret, charge("bookstore-1-a", "tok_visa")).Code)
	assert.Len(t, charges(t, s), 1, "charged with the store down")
	assert.Empty(t, idemKeys(t, c, s), "and no lock was ever held")
}

// TestPlantedGetThenSet: a request arriving while the first is processing
// finds nothing under the key and charges again.
func TestPlantedGetThenSet(t *testing.T) {
	s := newStore(t, redisstore.Config{Planted: redisstore.Planted{GetThenSet: true}})
	var p *provider.Provider
	nested := false
	p = provider.New(provider.Config{Store: s, BeforeCommit: func(*http.Request) {
		if !nested {
			nested = true
			assert.Equal(t, http.StatusCreated, post(t, p, "k1", secret, charge("bookstore-1-a", "tok_visa")).Code, "the overlapping retry is processed")
		}
	}})
	require.Equal(t, http.StatusCreated, post(t, p, "k1", secret, charge("bookstore-1-a", "tok_visa")).Code)
	assert.Len(t, charges(t, s), 2)
}
