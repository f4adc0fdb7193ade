package machine

import (
	"fmt"
	"time"

	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/sut/backend"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// A shrink against a URL is bounded per deviation (issue 24, item 2):
// shrinking one deviation took up to 94 % of the requests budget, or 5.5
// of a run's 6 minutes, and left the search for the others nothing. The
// run (conformance/internal/run, shrinkcap.go) gives the shrink of each
// deviation a ShrinkCap once rapid reproduced it; a check of that shrink
// stops once the cap is spent, and the run then ends the shrink with the
// smallest counterexample found so far, "not minimal: " and the cap's
// reason.

// DeviationShrinkShare is the share of each budget of a run against a URL
// (requests, charges, duration) that shrinking one deviation may spend
// after rapid reproduced it; the duration share is at most
// DeviationShrinkTime.
const DeviationShrinkShare = 0.05

// DeviationShrinkTime is the most wall-clock time shrinking one deviation
// may take, whatever the duration budget: 2 minutes.
const DeviationShrinkTime = 2 * time.Minute

// KnownShrinkShare is the share of each budget that shrinking a KNOWN
// deviation may spend (one its baseline lists, or whose invariant a
// requirement of the same certification already FAILed): none. It is
// reproduced once, reported at the length it was found, and its category
// acknowledged; a full shrink of one took up to 94 % of the requests
// budget. Its counterexample is "not minimal: known …".
const KnownShrinkShare = 0.0

// KnownCut is the prefix of the reason a known deviation's shrink was
// cut (the run's round; minimality).
const KnownCut = "known"

// DeviationCut is the prefix of the reason a deviation's shrink was cut
// by its share (DeviationShrinkShare, DeviationShrinkTime).
const DeviationCut = "its shrink may spend"

// ShrinkCap bounds the shrink of one deviation: from From, Share of each
// budget of the provider, and at most Time; Why names the cap ("known
// (listed in the baseline)", "its shrink may spend 5% …").
type ShrinkCap struct {
	From  Spend
	Share float64
	Time  time.Duration
	Why   string
}

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

// shrinkCapSpent reports, during a shrink, whether the check's ShrinkCap
// (Check.Cap) is spent on the provider, and why ("" if not or none); a
// share of 0 is spent at once.
func (m *Machine) shrinkCapSpent() string {
	c := m.run.Cap
	rb, ok := m.w.prov.(metered)
	if c == nil || !ok {
		return ""
	}
	now, _ := SpendNow(m.w.prov)
	lim := rb.Provider().Config().Limits
	share := func(n int) int { return max(1, int(float64(n)*c.Share)) }
	which := ""
	switch {
	case now.requests-c.From.requests >= share(lim.MaxRequests):
		which = "requests"
	case now.posts-c.From.posts >= share(lim.MaxCharges):
		which = "charges"
	case now.at.Sub(c.From.at) >= min(c.Time, time.Duration(float64(lim.MaxDuration)*c.Share)):
		which = "time"
	default:
		return ""
	}
	return fmt.Sprintf("%s: the %s share is spent", c.Why, which)
}

// Used is what s had used: requests and creates (each may charge).
func (s Spend) Used() (requests, creates int) { return s.requests, s.posts }

// Ended is the machine of a check that runs nothing and fails at once
// with v: the run's shrink of a counterexample was cut (a budget, or a
// known deviation's share) and every further check ends it (run.shrinkEnd).
// It has no world; only Conclude may be called on it.
func Ended(c Check, v *check.ViolationError) *Machine {
	return &Machine{run: c, failed: v, evals: map[string]int{}}
}
