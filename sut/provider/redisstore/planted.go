package redisstore

import (
	"context"
	"time"

	"github.com/idemcheck/idemcheck/sut/provider"
)

// ShortLease is the lease of the LeaseTooShort bug: 100 ms, shorter than a
// slow charge, so the key is free again while it still runs.
const ShortLease = 100 * time.Millisecond

// Planted lists the Redis store's deliberate bugs (mutants), the glue bugs
// users ship around article 004's design. The zero value is the reference.
type Planted struct {
	// GetThenSet: look the key up (GET), process, then store (SET) — no
	// in-flight marker at all: two requests that overlap both process
	// (article 004, "Race condition'u kaçırmayın").
	GetThenSet bool
	// LeaseTooShort: the marker's lease is ShortLease, so a slow charge
	// outlives its lock and a retry takes the key and charges again.
	LeaseTooShort bool
	// TTLSecondsAsMs: the response's TTL is the retention in seconds given
	// as PX milliseconds (24 h → 86 400 ms = 86 s): keys vanish a
	// thousand times too early.
	TTLSecondsAsMs bool
	// LockIsResponseTTL: the in-flight marker gets the retention window as
	// its TTL instead of a lease, so a request killed while it holds the
	// key blocks it (409) for the whole window.
	LockIsResponseTTL bool
	// ProcessWithoutLock: a failed SET NX (the store unreachable) is taken
	// as "key free" and the request is processed without any lock.
	ProcessWithoutLock bool
}

// markerLeaseMillis is the in-flight marker's PX.
func (s *Store) markerLeaseMillis() int64 {
	switch {
	case s.planted.LockIsResponseTTL: // planted bug: LockIsResponseTTL
		return s.retentionMillis()
	case s.planted.LeaseTooShort: // planted bug: LeaseTooShort
		return ShortLease.Milliseconds()
	}
	return s.lease.Milliseconds()
}

// retentionMillis is the stored response's PX.
func (s *Store) retentionMillis() int64 {
	if s.planted.TTLSecondsAsMs { // planted bug: TTLSecondsAsMs
		return max(int64(s.retention/time.Second), 1)
	}
	return s.retention.Milliseconds()
}

// plantedTakeError is Take's answer when Redis failed: the error, or under
// ProcessWithoutLock a go-ahead without a lock.
func (s *Store) plantedTakeError(key, fingerprint string, err error) (provider.Taken, error) {
	if s.planted.ProcessWithoutLock { // planted bug: ProcessWithoutLock
		return provider.Taken{Verdict: provider.TakeProcess, Key: key, Fingerprint: fingerprint}, nil
	}
	return provider.Taken{}, err
}

// getThenSet is Take under GetThenSet: GET, and process when absent,
// without marking the key.
func (s *Store) getThenSet(ctx context.Context, key, fingerprint string) (provider.Taken, error) {
	t, found, err := s.look(ctx, key, fingerprint)
	if err != nil {
		return t, err
	}
	if !found {
		return provider.Taken{Verdict: provider.TakeProcess, Key: key, Fingerprint: fingerprint}, nil
	}
	return t, nil
}
