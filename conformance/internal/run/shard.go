package run

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/sut/remote"
)

// Shard is conformance.Shard, one part of a run split across machines
// (IDEMCHECK_SHARD=i/n): shard Index of Count. The zero value is the whole
// run (shard 0 of 1).
//
// Seeds: rapid draws the k-th check of a property from seed s+k(k+1)/2,
// s its base seed. Shard i of n starts at base + i·⌊(2⁶⁴−1)/n⌋ (and each
// of its IDEMCHECK_PARALLEL properties at a further p·⌊stride/N⌋, see
// streamSeed), so with one -rapid.seed shared by every shard the shards'
// seeds lie in disjoint intervals of the 64-bit seed space as long as no
// property runs more than √(2·stride/N) checks (about 5.9 million for 16
// shards of 2 properties). Without -rapid.seed every property draws its own
// random base seed, as rapid does, and the shards are independent
// searches. Shard 0 of any n starts at the base seed itself.
//
// Budgets: against a URL each shard gets a 1/n share (rounded down, at
// least 1 request, 1 charge and 1 s) of IDEMCHECK_MAX_REQUESTS,
// IDEMCHECK_MAX_CHARGES and IDEMCHECK_MAX_DURATION (or their defaults), so
// n shards together never send more than one unsharded run may.
type Shard struct {
	Index, Count int
}

// ShardEnv is the variable that selects a shard.
const ShardEnv = "IDEMCHECK_SHARD"

// ParseShard reads "i/n" (0 ≤ i < n); "" is the whole run. Any other
// value is an error naming IDEMCHECK_SHARD.
func ParseShard(v string) (Shard, error) {
	if v == "" {
		return Shard{}, nil
	}
	is, ns, ok := strings.Cut(v, "/")
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	if !ok || !digits(is) || !digits(ns) || err1 != nil || err2 != nil || n < 1 || i >= n {
		return Shard{}, fmt.Errorf("conformance: %s=%q is not a shard i/n with 0 ≤ i < n, in decimal digits (e.g. 0/4 … 3/4)", ShardEnv, v)
	}
	return Shard{Index: i, Count: n}, nil
}

// ShardFromEnv is ParseShard of IDEMCHECK_SHARD.
func ShardFromEnv() (Shard, error) { return ParseShard(os.Getenv(ShardEnv)) }

// whole reports whether s is the whole run.
func (s Shard) whole() bool { return s.Count <= 1 }

// String is "i/n", "" for the whole run.
func (s Shard) String() string {
	if s.whole() {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// streamSeed is the base seed of property p of parallel on shard s, for a
// run whose -rapid.seed is base (see Shard): base itself for property 0
// of shard 0, which keeps an unsharded, unparallel run as it was.
func (s Shard) streamSeed(base uint64, p, parallel int) uint64 {
	n := uint64(max(s.Count, 1))
	stride := ^uint64(0) / n
	sub := stride / uint64(max(parallel, 1))
	return base + uint64(s.Index)*stride + uint64(p)*sub
}

// Limits is l with this shard's share of each budget (l's zero values
// are remote's defaults).
func (s Shard) Limits(l remote.Limits) remote.Limits {
	if s.whole() {
		return l
	}
	n := s.Count
	l.MaxRequests = max(orInt(l.MaxRequests, remote.DefaultMaxRequests)/n, 1)
	l.MaxCharges = max(orInt(l.MaxCharges, remote.DefaultMaxCharges)/n, 1)
	l.MaxDuration = max(orDuration(l.MaxDuration, remote.DefaultMaxDuration)/time.Duration(n), time.Second)
	return l
}

// digits reports whether s is one or more ASCII decimal digits (no sign,
// no space).
func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// orInt is n, or def when n is not positive.
func orInt(n, def int) int {
	if n > 0 {
		return n
	}
	return def
}

// orDuration is d, or def when d is not positive.
func orDuration(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
