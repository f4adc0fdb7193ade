package reports

import (
	"time"

	"github.com/idemcheck/idemcheck/models"
)

// Verdict is a requirement's outcome in a certification run: a three-way
// answer, never a bool that lies when time or budget runs out.
type Verdict string

// The verdicts.
const (
	// Pass: the provider met the requirement in every exchange that tested it.
	Pass Verdict = "PASS"
	// Fail: at least one exchange broke it; Evidence holds those exchanges.
	Fail Verdict = "FAIL"
	// Inconclusive: it was tried and could not be decided (a budget spent,
	// only transient answers, a linearizability check out of time); Reason
	// says why.
	Inconclusive Verdict = "INCONCLUSIVE"
	// NotJudged: the run's setup rules the requirement or invariant out
	// before anything is sent for it (the profile does not make the claim
	// or publishes a retention window longer than the run may wait, no
	// second API key, the dialect cannot express it, the provider serves
	// no refunds endpoint, a client without its own view); Reason says
	// which setting would judge it. Like NOT OFFERED it neither fails nor
	// clouds a run, but a run with nothing else judged is INCONCLUSIVE.
	NotJudged Verdict = "NOT JUDGED"
	// NotOffered: the requirement tests a MAY of the draft (a replay
	// header, say) that the provider does not offer and its profile does
	// not claim; it never fails a certification.
	NotOffered Verdict = "NOT OFFERED"
)

// The strengths of the rule a requirement tests (RequirementResult.Level):
// a broken MUST or SHOULD of the draft is FAIL; an absent MAY is NOT
// OFFERED; a claim of the provider's own profile is judged as the profile
// states it.
const (
	LevelMust    = "MUST"
	LevelShould  = "SHOULD"
	LevelMay     = "MAY"
	LevelProfile = "profile"
)

// RequirementResult is the verdict on one requirement of a certification
// run, with the exchanges that decided it.
type RequirementResult struct {
	// ID is the requirement's stable name, e.g. "replay-returns-first-response".
	ID string `json:"id"`
	// Title is one sentence in plain words.
	Title string `json:"title"`
	// Source is where the rule comes from: a section of
	// draft-ietf-httpapi-idempotency-key-header, docs/provider-api.md, or the
	// provider's own profile ("profile: retention_window").
	Source string `json:"source"`
	// Against is "draft" or "profile": which promise was tested.
	Against string `json:"against"`
	// Level is the strength of the rule: LevelMust, LevelShould, LevelMay
	// or LevelProfile.
	Level   string  `json:"level,omitempty"`
	Verdict Verdict `json:"verdict"`
	// Reason explains a FAIL or an INCONCLUSIVE in one sentence.
	Reason string `json:"reason,omitempty"`
	// Evidence is the exchanges that decided the verdict (secrets and card
	// tokens never appear in them).
	Evidence []models.Exchange `json:"evidence,omitempty"`
	// Seconds is the wall-clock time the requirement took, in seconds
	// (0 for one that sent nothing).
	Seconds float64 `json:"seconds,omitempty"`
	// Linearizability is porcupine's own visualisation (an HTML page) of
	// a concurrent history no order of the provider's decisions explains,
	// nil otherwise; WriteCertificationRun keeps it in the run folder as
	// LinearizabilityFile and the page links to it.
	Linearizability     []byte `json:"-"`
	LinearizabilityFile string `json:"linearizability,omitempty"`
	// Curl is the curl script that sends the Evidence's requests again
	// (the full Idempotency-Key headers, the bodies rebuilt from what was
	// sent, the API key only as ${IDEMCHECK_API_KEY}), a file in the run
	// folder that WriteCertificationRun writes for a FAIL or KNOWN with
	// evidence ("replay-returns-first-response.curl.sh"); Reproduce is the
	// command that runs it from where the run started.
	Curl      string `json:"curl,omitempty"`
	Reproduce string `json:"reproduce,omitempty"`
}

// Budget is one bounded resource of a remote run: how much was used of how
// much was allowed (0 = unbounded).
type Budget struct {
	Name  string `json:"name"` // "requests", "charges", "duration"
	Used  string `json:"used"`
	Limit string `json:"limit"`
}

// Certification is one certification run of a provider: which provider,
// through which dialect and profile, the budgets used, and a verdict per
// requirement.
type Certification struct {
	RunID    string `json:"run_id"`
	Provider string `json:"provider"` // "embedded", "wiremock", or the base URL
	Dialect  string `json:"dialect"`  // "reference", "stripe"
	Profile  string `json:"profile"`  // the profile's path or name, "" for none
	// KeyForm is the Idempotency-Key form the run sent its creates in
	// ("quoted" or "bare"): learned by the preflight, or pinned by the
	// profile's key_form; "" for a run not against a URL.
	KeyForm string `json:"key_form,omitempty"`
	// Seed is the property's rapid seed (-seed, -rapid.seed): the same
	// seed draws the same sequences again; 0 (left out) when the run
	// drew none or each property drew its own.
	Seed     uint64    `json:"seed,omitempty"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	Budgets  []Budget  `json:"budgets,omitempty"`
	// Causes are what is wrong with the provider, worst first, each with
	// the requirements and invariants that show it (certify.Explain
	// groups them); nil before grouping or when nothing failed.
	Causes []Cause `json:"causes"`
	// Requirements are in the documented order.
	Requirements []RequirementResult `json:"requirements"`
	// Invariants are the property's invariants over the run's random
	// sequences, in their checking order.
	Invariants []InvariantResult `json:"invariants,omitempty"`
	// Coverage is what the run's random sequences exercised.
	Coverage Coverage `json:"coverage"`
	// Deviations are the distinct deviations the property's failure
	// catalogue found, in the order found, each with its own
	// counterexample (FAIL, or KNOWN when the baseline lists it).
	Deviations []Deviation `json:"deviations,omitempty"`
	// BaselineUnused are the baseline's entries (IDEMCHECK_BASELINE) that
	// matched nothing in the run: no requirement id whose FAIL they made
	// KNOWN, no deviation's category or invariant; the page lists them on
	// one line, so a stale entry is seen.
	BaselineUnused []string `json:"baseline_unused,omitempty"`
	// Hooks are the lifecycle hooks the run ran, in order (hooks.log in
	// the run folder); nil when none was given.
	Hooks []HookRun `json:"hooks,omitempty"`
	// Rerun is the command that runs the whole certification again with
	// Seed ("" outside the idemcheck command); the page shows both at its
	// top.
	Rerun string `json:"-"`
	// runDir is the run folder as the caller named its report directory,
	// set by WriteCertificationRun, so the page's commands find its files.
	runDir string
}

// InvariantResult is one invariant's verdict over a run: how often it was
// evaluated and over how many subjects (Subject names them: "orders",
// "keys sent").
type InvariantResult struct {
	Name        string  `json:"name"`
	Verdict     Verdict `json:"verdict"`
	Evaluations int     `json:"evaluations"`
	Subjects    int     `json:"subjects"`
	Subject     string  `json:"subject,omitempty"`
	// Reason is the violation message of a FAIL, or why it is INCONCLUSIVE.
	Reason string `json:"reason,omitempty"`
}

// Coverage counts what a run exercised: drawn sequences run to their end,
// shopper steps, wire exchanges, and faults injected by kind
// ("lose-response": 9), and what shrinking its deviations spent (the
// sum of each Deviation's Shrink; shown even when nothing).
type Coverage struct {
	Sequences int            `json:"sequences"`
	Steps     int            `json:"steps"`
	Exchanges int            `json:"exchanges"`
	Faults    map[string]int `json:"faults"`
	Shrink    ShrinkSpend    `json:"shrink"`
}
