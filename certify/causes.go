package certify

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
)

// CauseReplayChargesAgain is the cause of a provider whose completed key
// answers a retry with the same body by charging again: every requirement
// and invariant that retries a key sees it.
const CauseReplayChargesAgain = "replay-charges-again"

// CauseDeclinesNotStored is the cause of a provider that does not store a
// declined key's 402: a decline sent again runs the card again (another
// body), and another card under the declined key can charge.
const CauseDeclinesNotStored = "declines-not-stored"

// CauseNoInflightLock is the cause of a provider whose key holds no lock
// while its first request is processed: concurrent requests under one
// key (a double click, with the same or another amount) each charge.
const CauseNoInflightLock = "no-inflight-lock"

// needsReplay are the requirements whose judgement needs a working
// replay (they compare a probe's answer with the replay of the first
// create): with CauseReplayChargesAgain they are NOT JUDGED because of it.
var needsReplay = []string{ReqQuotedKey, ReqShapes, ReqRetention, ReqReplayMarked, ReqStrayHeaders}

// severityOf is the severity of a requirement's FAIL when its evidence
// shows what the requirement guards against; a requirement not listed is
// LosesPayment. One that guards against a second charge whose evidence
// keeps one charge is a status-only cause instead (statusOnly).
var severityOf = map[string]reports.Severity{
	ReqReplay: reports.ChargesTwice, ReqMismatch: reports.ChargesTwice, ReqConcurrent: reports.ChargesTwice,
	ReqLostResponse: reports.ChargesTwice, ReqHangUp: reports.ChargesTwice, ReqRetries: reports.ChargesTwice,
	ReqShapes: reports.ChargesTwice, ReqRetention: reports.ChargesTwice, ReqInflightMismatch: reports.ChargesTwice,
	ReqRefundReplay: reports.ChargesTwice, ReqDeclinedKey: reports.ChargesTwice,
	ReqCrossAccount: reports.LosesPayment, ReqEndpointScope: reports.LosesPayment,
	ReqQuotedKey: reports.FormatOnly, ReqMissingKey: reports.FormatOnly, ReqReplayMarked: reports.FormatOnly,
	ReqProblemDetails: reports.FormatOnly, ReqMalformedKey: reports.FormatOnly, // issue 25: empty-key, long-key and key-blocked lose or block a payment
	ReqSlowRequest: reports.ChargesTwice, ReqInflightHint: reports.FormatOnly, ReqBodyLimit: reports.FormatOnly,
}

// invariantSeverity is the severity of a deviation of an invariant that
// no requirement's cause explains; one not listed is LosesPayment. A
// cause that takes in a listed invariant's deviation is at least as
// severe as it.
var invariantSeverity = map[string]reports.Severity{
	"at-most-one-charge-per-order": reports.ChargesTwice, "books-balance": reports.ChargesTwice,
	"replay-consistent": reports.ChargesTwice, "mismatch-rejected": reports.ChargesTwice,
	"one-key-per-intent": reports.ChargesTwice, "no-unsafe-retry": reports.ChargesTwice,
	"key-format": reports.FormatOnly,
}

// replayInvariants are the invariants a provider that charges a replay
// again breaks: their deviations show CauseReplayChargesAgain when it is
// a cause of the run.
var replayInvariants = []string{"replay-consistent", "at-most-one-charge-per-order", "books-balance"}

// Explain groups c's failures into causes (c.Causes, worst first; nil
// when nothing failed) and marks the requirements a cause leaves
// unjudgeable NOT JUDGED "because of <cause>" (issue 24, item 5):
//
//   - A FAIL of replay-returns-first-response whose evidence holds one
//     key and body answered with two charges is CauseReplayChargesAgain;
//     then the requirements that need a replay (needsReplay) are NOT
//     JUDGED because of it, every other FAIL requirement whose evidence
//     holds such a pair shows it, and so do the deviations of the
//     invariants a charged replay breaks.
//   - A requirement guarding against a second charge whose evidence
//     keeps one charge per merchant reference deviates in the status
//     alone: a lower-severity cause, "refused-<status>" (refuses wrongly)
//     when a keyed create was refused with a 4xx other than 402, 409,
//     422 and 429, shared by every requirement so refused; else its own
//     (loses or blocks a payment).
//   - Any other FAIL requirement is its own cause (severityOf), and a
//     FAIL deviation or invariant no cause explains is its invariant's.
//
// KNOWN and other verdicts are not causes. Explain is idempotent.
func Explain(c *reports.Certification) { ExplainShown(c, nil) }

// ExplainShown is Explain knowing, per invariant name, the requirement
// that shows its violations for the same fault (the run's Shown): a
// property deviation that names no requirement of its own joins that
// requirement's cause, as the run's known deviations do.
func ExplainShown(c *reports.Certification, shown map[string]string) {
	var causes []*reports.Cause
	byID := map[string]*reports.Cause{}
	cause := func(id string, sev reports.Severity, sentence, reason, reproduce string) *reports.Cause {
		if k := byID[id]; k != nil {
			return k
		}
		k := &reports.Cause{ID: id, Severity: sev, Sentence: sentence, Reason: reason, Reproduce: reproduce}
		byID[id] = k
		causes = append(causes, k)
		return k
	}
	var replay *reports.Cause
	var seen seenFails
	for _, r := range c.Requirements {
		if r.ID == ReqReplay && r.Verdict == reports.Fail && chargedAgain(r.Evidence) {
			replay = cause(CauseReplayChargesAgain, reports.ChargesTwice,
				"a completed key is charged again: a retry with the same key and body gets a new charge, not the first response",
				r.Reason, r.Reproduce)
		}
		seen.note(r)
	}
	for i := range c.Requirements {
		r := &c.Requirements[i]
		if replay != nil && r.Verdict == reports.NotJudged && strings.HasPrefix(r.Reason, "because of "+replay.ID+" ") {
			replay.Explains = append(replay.Explains, r.ID) // explained by an earlier Explain
		}
		if r.Verdict != reports.Fail {
			continue
		}
		switch {
		case replay != nil && slices.Contains(needsReplay, r.ID):
			r.Verdict = reports.NotJudged
			r.Reason = fmt.Sprintf("because of %s (%s): its judgement needs a replay; it saw: %s",
				replay.ID, replay.Sentence, strings.TrimSuffix(r.Reason, "."))
			replay.Explains = append(replay.Explains, r.ID)
			continue
		case replay != nil && chargedAgain(r.Evidence):
			replay.Requirements = append(replay.Requirements, r.ID)
			continue
		}
		sev, ok := severityOf[r.ID]
		if !ok {
			sev = reports.LosesPayment
		}
		k, own := explainRequirement(*r, sev, seen, cause)
		k.Requirements = append(k.Requirements, r.ID)
		k.Severity = worse(k.Severity, own)
	}
	// A deviation the run did not shrink because a requirement had shown
	// its invariant belongs to that requirement's cause (the run itself
	// took it for the same fault); an invariant a deviation's
	// counterexample also shows, to that deviation's cause.
	ofRequirement, ofInvariant := map[string]*reports.Cause{}, map[string]*reports.Cause{}
	for _, k := range causes {
		for _, id := range k.Requirements {
			ofRequirement[id] = k
		}
	}
	failed := map[string]bool{}
	for _, d := range c.Deviations {
		if d.Verdict != reports.Fail || failed[d.Invariant] {
			continue
		}
		failed[d.Invariant] = true
		k := ofRequirement[shownByRequirement(d.Minimal)]
		if k == nil {
			k = ofRequirement[shown[d.Invariant]]
		}
		ofInvariant[d.Invariant] = explainInvariant(d.Invariant, d.Message, d.Replay, replay, byID[CauseDeclinesNotStored], k, cause)
	}
	for _, inv := range c.Invariants {
		if inv.Verdict == reports.Fail && !failed[inv.Name] {
			failed[inv.Name] = true
			explainInvariant(inv.Name, inv.Reason, c.Rerun, replay, byID[CauseDeclinesNotStored], ofInvariant[witnessOf(inv.Reason)], cause)
		}
	}
	slices.SortStableFunc(causes, func(a, b *reports.Cause) int {
		return slices.Index(reports.Severities, a.Severity) - slices.Index(reports.Severities, b.Severity)
	})
	c.Causes = nil
	for _, k := range causes {
		c.Causes = append(c.Causes, *k)
	}
}

// explainRequirement is the cause FAIL requirement r shows (made by
// cause) and the severity r itself gives it: sev, r's severityOf, for a
// cause of its own or a group's, lower for a status-only deviation.
func explainRequirement(r reports.RequirementResult, sev reports.Severity, seen seenFails,
	cause func(id string, sev reports.Severity, sentence, reason, reproduce string) *reports.Cause) (*reports.Cause, reports.Severity) {
	guardsCharge := sev == reports.ChargesTwice && r.ID != ReqDeclinedKey
	switch status, refused := refusal(r.Evidence, r.ID != ReqMismatch && r.ID != ReqInflightMismatch); {
	case (r.ID == ReqConcurrent || r.ID == ReqInflightMismatch && (seen.noLock || seen.otherBody == nil)) && twoCharges(r.Evidence):
		return cause(CauseNoInflightLock, reports.ChargesTwice,
			"concurrent requests under one key are each processed: the key holds no lock while its first request runs, so a double click charges twice",
			r.Reason, r.Reproduce), reports.ChargesTwice
	case seen.otherBody != nil && slices.Contains(otherBodyShown, r.ID) && processedOtherBody(r.Evidence) &&
		!(r.ID == ReqDeclinedKey && declineRunAgain(r.Evidence)):
		m := seen.otherBody
		return cause(m.ID, reports.ChargesTwice, strings.TrimSuffix(m.Title, "."), m.Reason, m.Reproduce), reports.ChargesTwice
	case r.ID == ReqLargeBody && twoCharges(r.Evidence):
		return cause(r.ID, reports.ChargesTwice, strings.TrimSuffix(r.Title, "."), r.Reason, r.Reproduce), reports.ChargesTwice
	case r.ID == ReqDeclinedKey:
		return cause(CauseDeclinesNotStored, reports.ChargesTwice, declinesSentence, r.Reason, r.Reproduce), reports.ChargesTwice
	case r.ID == ReqReplay && declineRunAgain(r.Evidence) && !twoCharges(r.Evidence):
		return cause(CauseDeclinesNotStored, reports.LosesPayment, declinesSentence, r.Reason, r.Reproduce), reports.LosesPayment
	case guardsCharge && !twoCharges(r.Evidence) && refused:
		return cause(fmt.Sprintf("refused-%d", status), reports.RefusesWrongly,
			fmt.Sprintf("a keyed create is refused with %d where the draft wants it processed or replayed; one charge is kept: the deviation is in the status alone", status),
			r.Reason, r.Reproduce), reports.RefusesWrongly
	case guardsCharge && !twoCharges(r.Evidence):
		return cause(CauseStatusOnly, reports.LosesPayment, statusOnlySentence, r.Reason, r.Reproduce), reports.LosesPayment
	}
	return cause(r.ID, sev, strings.TrimSuffix(r.Title, "."), r.Reason, r.Reproduce), sev
}

// otherBodyShown are the requirements that send another body under a key
// in use and, when the provider processes it as a new payment, show the
// same fault as reused-key-other-body-refused: a key the provider holds
// per body (or never compares with its first body).
var otherBodyShown = []string{ReqMismatch, ReqInflightMismatch, ReqDeclinedKey, ReqLargeBody}

// seenFails is what Explain notes of every requirement before it groups
// them: a cause is told by the verdicts of its neighbours too.
type seenFails struct {
	// otherBody is reused-key-other-body-refused when it FAILed with
	// another body under a used key charged (processedOtherBody): the
	// requirements of otherBodyShown that show the same are its cause,
	// not a declined key not stored nor a missing in-flight lock.
	otherBody *reports.RequirementResult
	// noLock: concurrent-same-key-charges-once FAILed with two charges,
	// so the key holds no lock even for one body.
	noLock bool
}

func (s *seenFails) note(r reports.RequirementResult) {
	switch {
	case r.Verdict != reports.Fail:
	case r.ID == ReqMismatch && processedOtherBody(r.Evidence):
		s.otherBody = &r
	case r.ID == ReqConcurrent && twoCharges(r.Evidence):
		s.noLock = true
	}
}

// processedOtherBody reports whether evs hold a keyed create answered
// with a charge under a key whose first create carried another body
// (fingerprint) and was answered with no charge or another one: the later
// body was processed as a payment of its own, not refused or replayed.
func processedOtherBody(evs []models.Exchange) bool {
	type first struct{ fp, charge string }
	firsts := map[string]first{}
	for _, e := range evs {
		if !e.IsPost() || !e.HasKey {
			continue
		}
		id := chargeOf(e)
		f, ok := firsts[e.KeyHeader]
		if !ok {
			firsts[e.KeyHeader] = first{e.Fingerprint, id}
			continue
		}
		if e.Fingerprint != f.fp && id != "" && id != f.charge {
			return true
		}
	}
	return false
}

// declinesSentence is CauseDeclinesNotStored's sentence.
const declinesSentence = "a declined key's 402 is not stored: a decline sent again runs the card again, and another card under the key is processed"

// explainInvariant adds a failed invariant to the replay cause when that
// explains it, to the declines cause when its message is about a 402
// answered again, to known (the cause the run already took it for) when
// not nil, else to a cause of its own (made by cause); it returns the
// cause it added it to.
func explainInvariant(name, message, reproduce string, replay, declines, known *reports.Cause,
	cause func(id string, sev reports.Severity, sentence, reason, reproduce string) *reports.Cause) *reports.Cause {
	var k *reports.Cause
	switch {
	case replay != nil && slices.Contains(replayInvariants, name):
		k = replay
	case declines != nil && name == "replay-consistent" && strings.Contains(message, "answered 402, then 402"):
		k = declines
	case name == "replay-consistent" && sameCharge(message):
		// a replay that kept the charge and changed its status (201, then
		// 200): the status alone, below a charge twice
		k = cause(CauseStatusOnly, reports.LosesPayment, statusOnlySentence, message, reproduce)
	case known != nil:
		k = known
		if sev, ok := invariantSeverity[name]; ok {
			k.Severity = worse(k.Severity, sev)
		}
	default:
		sev, ok := invariantSeverity[name]
		if !ok {
			sev = reports.LosesPayment
		}
		k = cause(name, sev, "the property's invariant "+name+" is violated", message, reproduce)
	}
	if k.Reproduce == "" {
		k.Reproduce = reproduce
	}
	k.Invariants = append(k.Invariants, name)
	return k
}

// CauseStatusOnly is the cause of every answer that differs from the
// draft's in its status alone while one charge is kept (a refusal with a
// 4xx is refused-<status> instead).
const CauseStatusOnly = "status-only"

// statusOnlySentence is CauseStatusOnly's sentence.
const statusOnlySentence = "the answer differs from the one the draft wants, but one charge is kept: the deviation is in the status alone"

// sameChargeRE reads replay-consistent's "answered 201 ch_1, then 200 ch_1".
var sameChargeRE = regexp.MustCompile(`answered \d+ (ch_\w+), then \d+ (ch_\w+)`)

// sameCharge reports whether a replay-consistent message names one charge
// twice: the replay kept the charge, and differed in its status.
func sameCharge(message string) bool {
	m := sameChargeRE.FindStringSubmatch(message)
	return m != nil && m[1] == m[2]
}

// shownByRE and witnessRE find, in a deviation's shrink state and in an
// invariant's reason, what the run already tied them to (run/shrinkcap.go
// knownWhy, run/witness.go chargesWitness).
var (
	shownByRE = regexp.MustCompile(`known \(requirement (\S+) FAILed on `)
	witnessRE = regexp.MustCompile(`^deviation \d+'s counterexample \((\S+)\) also shows `)
)

// shownByRequirement is the requirement a deviation's shrink state says
// showed it, so that it was not shrunk again; "" when none.
func shownByRequirement(minimal string) string {
	if m := shownByRE.FindStringSubmatch(minimal); m != nil {
		return m[1]
	}
	return ""
}

// witnessOf is the invariant of the deviation whose counterexample an
// invariant's reason says also breaks it; "" when none.
func witnessOf(reason string) string {
	if m := witnessRE.FindStringSubmatch(reason); m != nil {
		return m[1]
	}
	return ""
}

// worse is the worse of two severities (Severities' order).
func worse(a, b reports.Severity) reports.Severity {
	if slices.Index(reports.Severities, b) < slices.Index(reports.Severities, a) {
		return b
	}
	return a
}

// declineRunAgain reports whether evs hold one key and body declined
// (402) twice with different bodies: the decline ran again, it was not
// replayed.
func declineRunAgain(evs []models.Exchange) bool {
	first := map[string]string{}
	for _, e := range evs {
		if !e.IsPost() || !e.HasKey || e.ProviderStatus != 402 {
			continue
		}
		k := e.KeyHeader + "\x00" + e.Fingerprint
		if f, ok := first[k]; ok && f != e.ProviderBodyDigest {
			return true
		}
		first[k] = e.ProviderBodyDigest
	}
	return false
}

// chargedAgain reports whether evs hold one Idempotency-Key header and
// body (fingerprint) answered with two different charges.
func chargedAgain(evs []models.Exchange) bool {
	first := map[string]string{}
	for _, e := range evs {
		id := chargeOf(e)
		if !e.IsPost() || !e.HasKey || id == "" {
			continue
		}
		k := e.KeyHeader + "\x00" + e.Fingerprint
		if f, ok := first[k]; ok && f != id {
			return true
		}
		first[k] = id
	}
	return false
}

// twoCharges reports whether evs show two charges for one merchant
// reference: two creates answered with different charges, or a lookup
// that lists two.
func twoCharges(evs []models.Exchange) bool {
	byRef := map[string]map[string]bool{}
	for _, e := range evs {
		ref := e.MerchantReference
		if ref == "" {
			ref = e.Query // a lookup: GET /v1/charges?merchant_reference=…
		}
		for id := range strings.SplitSeq(chargeOf(e), ",") {
			if id == "" {
				continue
			}
			if byRef[ref] == nil {
				byRef[ref] = map[string]bool{}
			}
			byRef[ref][id] = true
			if len(byRef[ref]) > 1 {
				return true
			}
		}
	}
	return false
}

// refusal is the first status a keyed create was refused with that the
// draft does not give a create: a 4xx other than 402 (declined), 409 (in
// flight), 429 (slow down) and, unless with422, 422 (another body; an
// equivalent request refused as another body is a wrong refusal), as the
// provider answered it and with no fault injected.
func refusal(evs []models.Exchange, with422 bool) (int, bool) {
	for _, e := range evs {
		s := e.ProviderStatus
		if e.IsPost() && e.HasKey && (e.Fault == "" || e.Fault == "pass") && s >= 400 && s < 500 &&
			s != 402 && s != 409 && s != 429 && (with422 || s != 422) {
			return s, true
		}
	}
	return 0, false
}

// chargeOf is the charge e was answered with, as the client saw it or, if
// it saw none, as the provider answered.
func chargeOf(e models.Exchange) string {
	if e.ChargeID != "" {
		return e.ChargeID
	}
	return e.ProviderChargeID
}
