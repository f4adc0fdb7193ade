package machine

import (
	"crypto/sha256"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// keySource makes UUIDv7 values (RFC 9562 §5.7) from the virtual clock and
// a fixed-seed ChaCha8 stream, so that one drawn sequence produces the same
// keys every time it runs — rapid needs that to shrink, and a report's keys
// then match its replay. uuid.NewV7 keeps process-global state that makes
// its values depend on earlier runs, which is why the harness cannot use it
// here; the reference client still defaults to it. Safe for concurrent use.
type keySource struct {
	mu  sync.Mutex // guards rng, busy, base, n
	rng *rand.ChaCha8
	now func() time.Time
	// busy: Key makes a busy UUIDv7 client's keys (SetBusy).
	busy bool
	base uuid.UUID // the first key made busy
	n    uint16    // busy keys made after base
}

// SetBusy switches Key to the keys of a busy UUIDv7 client (issue 28):
// every key from then on is the first busy key with a counter in its last
// 16 bits, as RFC 9562 §6.2's fixed-length counter makes keys of one
// millisecond, so the keys of a sequence share their first 32 characters
// and differ only in the last 4. A provider that truncates or folds keys
// merges two such intents. UUID (attempt ids) is unchanged, and so is the
// stream: a busy key still takes one UUID's worth of it.
func (k *keySource) SetBusy() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.busy = true
}

func newKeySource(now func() time.Time) *keySource {
	return &keySource{rng: rand.NewChaCha8([32]byte{'i', 'd', 'e', 'm', 'c', 'h', 'e', 'c', 'k'}), now: now}
}

// remoteSequences counts the sequences this process has run against a
// remote provider, so that each draws its own key stream.
var remoteSequences atomic.Uint64

// newRemoteKeySource is the keySource of one sequence of a remote run: its
// stream is seeded by the run id and the sequence's number in the process,
// so its keys and attempt ids (hence merchant references) differ from
// every other run's and from every other sequence's of this run, which
// share the provider. A stream seeded by the run id alone made all the
// sequences of a run differ only in the 48-bit millisecond, and two
// attempts made in the same millisecond shared a merchant reference.
func newRemoteKeySource(now func() time.Time, runID string) *keySource {
	n := remoteSequences.Add(1)
	return &keySource{rng: rand.NewChaCha8(sha256.Sum256([]byte("idemcheck/" + runID + "/" + strconv.FormatUint(n, 10)))), now: now}
}

// UUID returns the next version-7 UUID.
func (k *keySource) UUID() uuid.UUID {
	k.mu.Lock()
	defer k.mu.Unlock()
	var u uuid.UUID
	_, _ = k.rng.Read(u[:]) // ChaCha8.Read never fails
	ms := uint64(k.now().UnixMilli())
	for i := 0; i < 6; i++ {
		u[i] = byte(ms >> (40 - 8*i))
	}
	u[6] = 0x70 | u[6]&0x0f // version 7
	u[8] = 0x80 | u[8]&0x3f // RFC 9562 variant
	return u
}

// Key returns the next key as a string.
func (k *keySource) Key() string {
	u := k.UUID()
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.busy {
		return u.String()
	}
	if k.base == (uuid.UUID{}) {
		k.base = u
	}
	u = k.base
	u[14], u[15] = byte(k.n>>8), byte(k.n)
	k.n++
	return u.String()
}
