package machine

import (
	"fmt"
	"time"

	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/sut/backend"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// KnownShrinkShare is the share of each budget of a run against a URL
// (requests, charges, duration) that shrinking a KNOWN deviation (one its
// baseline lists) may spend, counted from when the round found it: a known
// deviation is reported but need not be minimal, and a full shrink of it
// took up to 94 % of the requests budget, which left the search for new
// deviations nothing and the run INCONCLUSIVE. A shrink cut by it reports
// its counterexample as "not minimal: known".
const KnownShrinkShare = 0.1

// KnownCut is the prefix of the reason a known deviation's shrink was
// cut short by KnownShrinkShare (the run's round; minimality).
const KnownCut = "known (listed in the baseline): its shrink may spend"

// metered is a backend whose requests go through a remote provider's
// meter: backend.Remote, alone or with a second account.
type metered interface{ Provider() *remote.Provider }

// Spend is what a run against a URL had used of its budgets at a moment:
// requests, creates and when.
type Spend struct {
	requests, posts int
	at              time.Time
}

// SpendNow is what b has used so far; ok false when b is not metered (in
// process, a service: no budgets to share).
func SpendNow(b backend.Backend) (Spend, bool) {
	r, ok := b.(metered)
	if !ok {
		return Spend{}, false
	}
	req, posts := r.Provider().Meter().Used()
	return Spend{requests: req, posts: posts, at: time.Now()}, true
}

// knownShrinkSpent reports, during a shrink, whether the round's found
// violation is KNOWN (Check.KnownFrom) and its shrink has spent its
// KnownShrinkShare of a budget of the provider since it was found, and
// why ("" if not).
func (m *Machine) knownShrinkSpent() string {
	from := m.run.KnownFrom
	rb, ok := m.w.prov.(metered)
	if from == nil || !ok {
		return ""
	}
	now, _ := SpendNow(m.w.prov)
	lim := rb.Provider().Config().Limits
	share := func(n int) int { return max(1, int(float64(n)*KnownShrinkShare)) }
	which := ""
	switch {
	case now.requests-from.requests >= share(lim.MaxRequests):
		which = "requests"
	case now.posts-from.posts >= share(lim.MaxCharges):
		which = "charges"
	case now.at.Sub(from.at) >= time.Duration(float64(lim.MaxDuration)*KnownShrinkShare):
		which = "duration"
	default:
		return ""
	}
	return fmt.Sprintf("%s %.0f%% of each budget, and the %s share is spent", KnownCut, KnownShrinkShare*100, which)
}

// Ended is the machine of a check that runs nothing and fails at once
// with v: the run's shrink of a counterexample was cut (a budget, or a
// known deviation's share) and every further check ends it (run.shrinkEnd).
// It has no world; only Conclude may be called on it.
func Ended(c Check, v *check.ViolationError) *Machine {
	return &Machine{run: c, failed: v, evals: map[string]int{}}
}
