package run

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/conformance/internal/machine"
	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/reports"
)

// Stats is what a run checked: sequences, steps, exchanges, faults
// injected by kind, and per invariant how often it was evaluated and over
// how many subjects (intents, keys, replays, charges…), over the
// sequences that ran to a verdict — the failing ones included, rapid's
// shrinking attempts and sequences a budget cut short not — and the
// deviations the failure catalogue found. It is safe for concurrent use.
type Stats struct {
	mu        sync.Mutex // guards all fields below
	sequences int
	steps     int
	exchanges int
	faults    map[faults.Kind]int
	evals     map[string]int
	subjects  map[string]int
	// notJudged says why an invariant is left out of this run, by name.
	notJudged map[string]string
	// stopped says why a remote run stopped early (a budget), "" if not.
	stopped string
	// notStarted says why the property never ran (its preflight failed:
	// a redirect, an answer not of the dialect), "" if it ran.
	notStarted string
	// violated and violation are the invariant a failing run broke, and
	// its message.
	violated, violation string
	// deviations are the failure catalogue's, in the order found.
	deviations []reports.Deviation
	// witnesses are what a deviation's counterexample shows of another
	// invariant (witness.go); they judge it, and are no deviation.
	witnesses []reports.Deviation
	// folder is the run folder, "" until the run started.
	folder string
}

// Results is the run's verdict on each invariant, for a certification
// page: FAIL for the one a failing run broke (a deviation not in the
// baseline), KNOWN for one whose only deviations the baseline lists,
// INCONCLUSIVE for one this
// provider cannot be judged on, when a budget stopped the run, or when
// what it speaks of never happened (0 reused keys with another body: it
// held vacuously), PASS for the others once evaluated.
func (s *Stats) Results() []reports.InvariantResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []reports.InvariantResult
	for _, inv := range append(check.Safety(), check.Liveness()...) {
		r := reports.InvariantResult{Name: inv.Name, Verdict: reports.Pass, Evaluations: s.evals[inv.Name],
			Subjects: s.subjects[inv.Name], Subject: subjectOf[inv.Name]}
		known, failed := "", ""
		for _, d := range append(append([]reports.Deviation(nil), s.deviations...), s.witnesses...) {
			switch {
			case d.Invariant == inv.Name && d.Verdict == reports.Fail && failed == "":
				failed = d.Message
			case d.Invariant == inv.Name && d.Verdict == reports.Known && known == "":
				known = d.Message
			}
		}
		switch why, notJudged := s.notJudged[inv.Name]; {
		case failed != "":
			r.Verdict, r.Reason = reports.Fail, failed
		case inv.Name == s.violated:
			r.Verdict, r.Reason = reports.Fail, s.violation
		case notJudged:
			r.Verdict, r.Reason = reports.NotJudged, why
		case known != "":
			r.Verdict, r.Reason = reports.Known, "in the baseline: "+known
		case s.notStarted != "":
			r.Verdict, r.Reason = reports.Inconclusive, "not judged: "+s.notStarted
		case s.stopped != "":
			r.Verdict, r.Reason = reports.Inconclusive, "the run stopped early: "+s.stopped
		case r.Evaluations == 0:
			r.Verdict, r.Reason = reports.Inconclusive, "never evaluated"
		case r.Subjects == 0 && s.sequences > 0 && s.ruledOut(inv.Name) != "":
			// Nothing to judge, because of another deviation: not a matter of
			// more sequences.
			r.Verdict, r.Reason = reports.NotJudged, s.ruledOut(inv.Name)
		case r.Subjects == 0 && s.sequences > 0:
			// Held, but only vacuously: nothing it speaks of happened.
			r.Verdict, r.Reason = reports.Inconclusive, fmt.Sprintf("held vacuously: no %s in %d sequences", r.Subject, s.sequences)
		}
		out = append(out, r)
	}
	if s.violated == machine.ClientAPI { // the client broke its contract: no invariant is to blame
		out = append(out, reports.InvariantResult{Name: machine.ClientAPI, Verdict: reports.Fail, Reason: s.violation})
	}
	return out
}

// ruledOut is why inv had nothing to judge when the run found a deviation
// of the invariant it is judged after (check.JudgedAfter), "" if it did
// not. s.mu is held.
func (s *Stats) ruledOut(inv string) string {
	after := check.JudgedAfter(inv)
	if after == "" {
		return ""
	}
	for _, d := range s.deviations {
		if d.Invariant == after {
			return fmt.Sprintf("not judged: it judges a request shape only under a key shown to replay, and %s's deviation (%s) left none in %d sequences", after, strings.ToLower(string(d.Verdict)), s.sequences)
		}
	}
	return ""
}

// Coverage is what the run exercised, for a certification page.
func (s *Stats) Coverage() reports.Coverage {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := reports.Coverage{Sequences: s.sequences, Steps: s.steps, Exchanges: s.exchanges, Faults: map[string]int{}, Shrink: shrinkTotal(s.deviations)}
	for k, v := range s.faults {
		c.Faults[string(k)] = v
	}
	return c
}

func newStats(cfg Config) *Stats {
	s := &Stats{faults: map[faults.Kind]int{}, evals: map[string]int{}, subjects: map[string]int{}, notJudged: map[string]string{}}
	s.judging(cfg)
	return s
}

// notStart records why the property never ran, unless already known.
func (s *Stats) notStart(why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.notStarted == "" {
		s.notStarted = why
	}
}

// refuse fails t on err, a run refused before it started, and says why
// in every invariant's result.
func (s *Stats) refuse(t *testing.T, err error) {
	t.Helper()
	s.notStart("the run was refused before it started: " + err.Error())
	t.Fatal(err)
}

// judging records which invariants cfg's provider leaves unjudged (run
// calls it again once a remote provider is resolved).
func (s *Stats) judging(cfg Config) {
	why := ""
	switch {
	case cfg.Provider == machine.ProviderWireMock:
		why = "a provider-only invariant; WireMock answers what the harness programmed from the specification"
	case cfg.IsRemote() && cfg.Remote != nil:
		_, why = machine.RemoteJudged(cfg.Remote)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, name := range check.ProviderOnly() {
		if why != "" {
			s.notJudged[name] = why
		} else {
			delete(s.notJudged, name)
		}
	}
	if cfg.IsRemote() && cfg.Remote != nil && why == "" {
		if _, ok := cfg.Remote.Account2(); !ok || cfg.Remote.Profile().Accounts < 2 {
			s.notJudged[check.KeyScopedPerAccount] = "needs a second account: accounts: 2 in the profile and its API key (IDEMCHECK_API_KEY_2)"
		}
	}
}

// leaveOut marks the invariants of why (name → reason) not judged.
func (s *Stats) leaveOut(why map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, reason := range why {
		s.notJudged[name] = reason
	}
}

// deviation adds one the failure catalogue found.
func (s *Stats) deviation(d reports.Deviation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deviations = append(s.deviations, d)
}

// Deviations are the distinct deviations the run found, in the order
// found: against a URL every one its failure catalogue found; else the
// shrunk failure of each property that failed (one, unless
// IDEMCHECK_PARALLEL runs several).
func (s *Stats) Deviations() []reports.Deviation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]reports.Deviation(nil), s.deviations...)
}

// RunFolder is the run's folder, <report dir>/<UTC start>-<test>
// (reports.RunFolder), where its summary or failure report goes; "" when
// the run did not start (a refused configuration, a provider that does
// not answer). A run of IDEMCHECK_PARALLEL properties that failed writes
// each failure in its property's own folder instead.
func (s *Stats) RunFolder() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.folder
}

// setFolder records the run folder of test, started at started, under dir.
func (s *Stats) setFolder(dir string, started time.Time, test string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.folder = filepath.Join(dir, reports.RunFolder(started, test))
}

// sequence adds a sequence that ran to a verdict: to its end, or to its
// violation (then the world that showed it is counted, with no new
// request to the provider).
func (s *Stats) sequence(m *machine.Machine) {
	failed, w := m.Failed()
	if failed == nil && m.Known() == nil {
		var ok bool
		if w, ok = m.FinalWorld(); !ok { // the world the verdict read, when nothing came after it
			var err error
			if w, err = m.World().Snapshot(); err != nil {
				return // the check fails on it as broken; nothing to count
			}
		}
	}
	cov := check.Coverage(w)
	inj := m.World().Injected()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sequences++
	s.steps += m.Steps()
	s.exchanges += len(w.History.Exchanges)
	for k, v := range m.Evals() {
		s.evals[k] += v
	}
	for k, v := range inj {
		s.faults[k] += v
	}
	for k, v := range cov {
		s.subjects[k] += v
	}
	if !w.RefundsJudged {
		// The refund action and the refunds-endpoint probe are drawn
		// only where the provider's refunds can be read (in process, on either store, and WireMock).
		for _, name := range []string{check.AtMostOneRefundPerIntent, check.KeyScopedPerEndpoint} {
			if _, ok := s.notJudged[name]; !ok {
				s.notJudged[name] = "refunds are driven and read only where the harness reads the provider's refunds (the embedded provider, in memory or on Redis, and WireMock); this run does not"
			}
		}
	}
}

// Sequences is how many drawn sequences ran to their end.
func (s *Stats) Sequences() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sequences
}

// Evaluations is how many times invariant name was evaluated.
func (s *Stats) Evaluations(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.evals[name]
}

// Injected is how many faults of kind k were applied.
func (s *Stats) Injected(k faults.Kind) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.faults[k]
}

// subjectOf says what each invariant looks at, for the summary.
var subjectOf = map[string]string{
	check.OneKeyPerIntent:          "payment intents on the wire",
	check.AtMostOneChargePerOrder:  "orders",
	check.ConflictNeverFinal:       "unknown outcomes (409, timeout, reset, 5xx)",
	check.NoUnsafeRetry:            "POSTs",
	check.KeyFormat:                "keys sent",
	check.ReplayConsistent:         "replays and in-flight conflicts",
	check.MismatchRejected:         "reused keys with another body",
	check.BooksBalance:             "provider charges",
	check.ReconciliationConverges:  "attempts settled by reconciliation",
	check.EquivalentRequestsAgree:  "requests resent in another shape under a key that charged",
	check.KeyScopedPerAccount:      "keys resent by another account",
	check.NoStaleKey:               "keys resent by the client",
	check.KeyScopedPerEndpoint:     "requests to /v1/refunds",
	check.AtMostOneRefundPerIntent: "refund intents",
}

// Summary is the per-invariant report printed at the end of a run.
func (s *Stats) Summary() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs := reports.RunStats{Coverage: reports.Coverage{Sequences: s.sequences, Steps: s.steps, Exchanges: s.exchanges, Faults: map[string]int{}, Shrink: shrinkTotal(s.deviations)}}
	for k, v := range s.faults {
		rs.Coverage.Faults[string(k)] = v
	}
	for _, inv := range append(check.Safety(), check.Liveness()...) {
		r := reports.InvariantResult{Name: inv.Name, Evaluations: s.evals[inv.Name], Subjects: s.subjects[inv.Name], Subject: subjectOf[inv.Name]}
		if why, ok := s.notJudged[inv.Name]; ok {
			r = reports.InvariantResult{Name: inv.Name, Verdict: reports.NotJudged, Reason: why}
		}
		rs.Invariants = append(rs.Invariants, r)
	}
	var b strings.Builder
	b.WriteString(reports.StatsSummary(rs)) // the same lines a merge of runs prints
	for i, d := range s.deviations {
		fmt.Fprintf(&b, "deviation %d: %s %s, %d shopper steps, %s\n", i+1, d.Verdict, d.Message, d.Steps, d.Minimal)
	}
	return b.String()
}

// lastFailure holds the most recent failing check's report; rapid's last
// failing run is the shrunk counterexample. Safe for concurrent use.
type lastFailure struct {
	mu sync.Mutex // guards f, ok
	f  reports.Failure
	ok bool
}

func (l *lastFailure) set(f reports.Failure) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.f, l.ok = f, true
}

func (l *lastFailure) get() (reports.Failure, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f, l.ok
}

// Stopped says why a remote run stopped before its sequences were done (a
// budget ran out), "" when it did not.
func (s *Stats) Stopped() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopped
}
