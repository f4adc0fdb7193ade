package conformance

import (
	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/conformance/internal/run"
	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/reports"
)

// Stats is what a run checked: sequences, steps, exchanges, faults
// injected by kind, and per invariant how often it was evaluated and over
// how many subjects (intents, keys, replays, charges…), over the
// sequences that ran to a verdict — the failing ones included, rapid's
// shrinking attempts and sequences a budget cut short not — and the
// deviations the failure catalogue found. It is safe for concurrent use.
type Stats struct{ s *run.Stats }

// of is the run's statistics, none yet for a zero Stats.
func (s *Stats) of() *run.Stats {
	if s.s == nil {
		return &run.Stats{}
	}
	return s.s
}

// Results is the run's verdict on each invariant (docs/invariants.md, and
// ClientAPI when a client under test broke its contract): FAIL for one a
// deviation not in the baseline broke, KNOWN for one whose only deviations
// the baseline lists, NOT JUDGED for one this setup rules out,
// INCONCLUSIVE when a budget stopped the run or what it speaks of never
// happened (it held vacuously), PASS for the others once evaluated.
func (s *Stats) Results() []reports.InvariantResult { return s.of().Results() }

// Coverage is what the run exercised: sequences, steps, exchanges and
// faults by kind.
func (s *Stats) Coverage() reports.Coverage { return s.of().Coverage() }

// Deviations are the distinct deviations the run found, in the order
// found: against a URL every one its failure catalogue found; else the
// shrunk failure of each property that failed.
func (s *Stats) Deviations() []reports.Deviation { return s.of().Deviations() }

// RunFolder is the run's folder, <report dir>/<UTC start>-<test>, where
// its summary or failure report goes; "" when the run did not start. A
// run of several properties at once (Config.Parallel) that failed writes
// each failure in its property's own folder instead.
func (s *Stats) RunFolder() string { return s.of().RunFolder() }

// Sequences is how many drawn sequences ran to their end.
func (s *Stats) Sequences() int { return s.of().Sequences() }

// Evaluations is how many times invariant name was evaluated.
func (s *Stats) Evaluations(name string) int { return s.of().Evaluations(name) }

// Injected is how many faults of kind k were applied.
func (s *Stats) Injected(k faults.Kind) int { return s.of().Injected(k) }

// Summary is the per-invariant report printed at the end of a run.
func (s *Stats) Summary() string { return s.of().Summary() }

// Stopped says why the run stopped before its sequences were done (a
// budget ran out, the provider could not be read), "" when it did not.
func (s *Stats) Stopped() string { return s.of().Stopped() }

// The invariant names (docs/invariants.md), as Stats.Results and a
// *ViolationError name them.
const (
	OneKeyPerIntent          = "one-key-per-intent"
	AtMostOneChargePerOrder  = "at-most-one-charge-per-order"
	ConflictNeverFinal       = "409-never-final"
	NoUnsafeRetry            = "no-unsafe-retry"
	KeyFormat                = "key-format"
	ReplayConsistent         = "replay-consistent"
	MismatchRejected         = "mismatch-rejected"
	BooksBalance             = "books-balance"
	ReconciliationConverges  = "reconciliation-converges"
	EquivalentRequestsAgree  = "equivalent-requests-agree"
	KeyScopedPerAccount      = "key-scoped-per-account"
	AtMostOneRefundPerIntent = "at-most-one-refund-per-intent"
	KeyScopedPerEndpoint     = "key-scoped-per-endpoint"
	NoStaleKey               = "no-stale-key"
)

// ClientAPI names the failure of a client under test that breaks its own
// contract (package checkout, docs/client-api.md) rather than an
// invariant: a call that panicked, did not return within its bound, or
// answered something that is not one of the four outcomes.
const ClientAPI = "client-api"

// ViolationError is a broken invariant: its name, the message, and the
// category a baseline lists (check.ViolationError).
type ViolationError = check.ViolationError

// ErrViolation is the sentinel every *ViolationError wraps.
var ErrViolation = check.ErrViolation

// Baseline is a list of acknowledged deviations: a deviation it lists is
// reported KNOWN instead of FAIL (found again, with its counterexample,
// but not failing the run), so a team can gate CI on new deviations only.
// IDEMCHECK_BASELINE names its file.
//
// The file holds one entry a line; blank lines and lines starting with '#'
// are ignored, and so are spaces around an entry. An entry is a category
// exactly as a report shows it ("Category (what a baseline lists)", the
// "category" field of failure.json and certification.json: the
// violation's sentence with its particulars as "…"), which acknowledges
// that kind of violation; an invariant name alone ("mismatch-rejected"),
// which acknowledges every violation of it; or a certification
// requirement's id (certify.Requirements, "reused-key-other-body-refused"),
// whose FAIL a certification reports KNOWN ("known: listed in the
// baseline", the evidence kept). A certification page lists the entries
// that matched nothing as unused:
//
//	# known deviations of our sandbox (ticket PAY-123)
//	mismatch-rejected
//	reused-key-other-body-refused
//	replay-consistent: …: one key and body were answered …, then …: a completed key answers its first response
type Baseline []string

// ParseBaseline reads a baseline file's content (see Baseline); a UTF-8
// byte order mark at its start is dropped, and CRLF line ends are read as
// LF.
func ParseBaseline(b []byte) Baseline { return Baseline(run.ParseBaseline(b)) }

// LoadBaseline reads the baseline file at path; an unreadable file, one
// that is not a regular file (a folder, a FIFO, a device) or one over
// 1 MiB is an error naming IDEMCHECK_BASELINE, and nothing of it is read.
func LoadBaseline(path string) (Baseline, error) {
	b, err := run.LoadBaseline(path)
	return Baseline(b), err
}

// Knows reports whether the baseline acknowledges v: it lists v's
// category, or v's invariant by name.
func (b Baseline) Knows(v *ViolationError) bool { return run.Baseline(b).Knows(v) }

// Shard is one part of a run split across machines (IDEMCHECK_SHARD=i/n):
// shard Index of Count; the zero value is the whole run. Shards share one
// -rapid.seed and draw disjoint seeds from it; against a URL each gets a
// 1/Count share of the budgets, so Count shards together never send more
// than one unsharded run may (docs/sharding.md).
type Shard struct {
	Index, Count int
}

// String is "i/n" as IDEMCHECK_SHARD spells it, "" for the whole run.
func (s Shard) String() string { return run.Shard(s).String() }
