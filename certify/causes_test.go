package certify_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
)

// create is a keyed create of merchant reference ref with key header key
// and body fp, answered status with charge id (none for "").
func create(key, fp, ref string, status int, id string) models.Exchange {
	return models.Exchange{Method: "POST", Path: "/v1/charges", HasKey: true, KeyHeader: key, Fingerprint: fp,
		MerchantReference: ref, Fault: "pass", Forwarded: true, ProviderDone: true, ProviderStatus: status,
		ProviderChargeID: id, Done: true, Status: status, ChargeID: id}
}

func fail(id, reason string, evidence ...models.Exchange) reports.RequirementResult {
	return reports.RequirementResult{ID: id, Title: "The rule of " + id + ".", Verdict: reports.Fail, Reason: reason, Evidence: evidence}
}

// One planted bug (replay-new-charge: a completed key charges again) that
// nine requirements and an invariant see is one cause (issue 24, item 5):
// the requirements that retry a key show it, the ones whose judgement
// needs a replay are NOT JUDGED because of it (not a FAIL with another
// story), and the invariant's deviation shows it too.
func TestExplainOneBugIsOneCause(t *testing.T) {
	again := []models.Exchange{create(`"k1"`, "f1", "r1", 201, "ch_1"), create(`"k1"`, "f1", "r1", 201, "ch_2")}
	c := reports.Certification{
		Requirements: []reports.RequirementResult{
			fail(certify.ReqReplay, "a retry with the same key and body answered 201 ch_2, not the first response 201 ch_1", again...),
			{ID: certify.ReqMismatch, Verdict: reports.Pass},
			fail(certify.ReqLostResponse, "the retry answered 201 ch_2, not the lost response 201 ch_1", again...),
			fail(certify.ReqQuotedKey, "the bare token after the quoted key answered 201 ch_4, not the replay of 201 ch_3",
				create(`"k2"`, "f2", "r2", 201, "ch_3"), create(`k2`, "f2", "r2", 201, "ch_4")),
			fail(certify.ReqShapes, "with a trailing slash it was answered 201 ch_6, not the replay", again...),
		},
		Invariants: []reports.InvariantResult{{Name: "replay-consistent", Verdict: reports.Fail, Reason: "a retry was answered 201 ch_9"}},
		Deviations: []reports.Deviation{{Invariant: "replay-consistent", Verdict: reports.Fail, Message: "a retry was answered 201 ch_9",
			Replay: "idemcheck replay x.fail"}},
	}
	certify.Explain(&c)
	require.Len(t, c.Causes, 1, "%+v", c.Causes)
	k := c.Causes[0]
	assert.Equal(t, certify.CauseReplayChargesAgain, k.ID)
	assert.Equal(t, reports.ChargesTwice, k.Severity)
	assert.Equal(t, []string{certify.ReqReplay, certify.ReqLostResponse}, k.Requirements)
	assert.Equal(t, []string{"replay-consistent"}, k.Invariants)
	assert.Equal(t, []string{certify.ReqQuotedKey, certify.ReqShapes}, k.Explains)
	assert.Equal(t, "idemcheck replay x.fail", k.Reproduce, "before the run folder is written, the deviation's replay")
	for _, r := range c.Requirements[3:] {
		assert.Equal(t, reports.NotJudged, r.Verdict, r.ID)
		assert.Contains(t, r.Reason, "because of replay-charges-again (a completed key is charged again", r.ID)
	}
	assert.Contains(t, c.Requirements[3].Reason, "it saw: the bare token after the quoted key answered 201 ch_4")
	assert.Equal(t, reports.Fail, c.Overall())
	assert.Contains(t, c.Counts(), "causes (1): 1 charges twice; requirements (5): 1 PASS, 2 FAIL, 0 INCONCLUSIVE, 2 NOT JUDGED; ")

	again2 := c
	certify.Explain(&again2)
	assert.Equal(t, c.Causes, again2.Causes, "Explain is idempotent")

	js, err := reports.CertificationJSON(c)
	require.NoError(t, err)
	var out struct {
		Causes []struct {
			ID, Sentence, Severity string
			Requirements           []string
			Invariants             []string
		}
	}
	require.NoError(t, json.Unmarshal(js, &out))
	require.Len(t, out.Causes, 1)
	assert.Equal(t, "charges twice", out.Causes[0].Severity)
	assert.Equal(t, []string{"replay-consistent"}, out.Causes[0].Invariants)
}

// A deviation in the status alone, with one charge kept, is its own
// lower-severity cause (issue 24, item 6): a retry refused with 417 fails
// two requirements that guard against a second charge, and reads as one
// "refused wrongly" cause, after a real second charge.
func TestExplainStatusOnlyIsItsOwnLowerCause(t *testing.T) {
	refused := []models.Exchange{create(`"k1"`, "f1", "r1", 201, "ch_1"), create(`"k1"`, "f1", "r1", 417, "")}
	c := reports.Certification{Requirements: []reports.RequirementResult{
		fail(certify.ReqLostResponse, "the retry answered 417, not the lost response 201 ch_1", refused...),
		fail(certify.ReqMismatch, "another amount under the key answered 201 ch_3",
			create(`"k2"`, "f2", "r2", 201, "ch_2"), create(`"k2"`, "f3", "r2", 201, "ch_3")),
		fail(certify.ReqRetries, "a retry after the key settled on 201 ch_1 answered 417", refused...),
		fail(certify.ReqQuotedKey, "the quoted key was refused with 400"),
	}}
	certify.Explain(&c)
	var ids []string
	var sev []reports.Severity
	for _, k := range c.Causes {
		ids, sev = append(ids, k.ID), append(sev, k.Severity)
	}
	assert.Equal(t, []string{certify.ReqMismatch, "refused-417", certify.ReqQuotedKey}, ids, "worst first")
	assert.Equal(t, []reports.Severity{reports.ChargesTwice, reports.RefusesWrongly, reports.FormatOnly}, sev)
	assert.Equal(t, []string{certify.ReqLostResponse, certify.ReqRetries}, c.Causes[1].Requirements, "one refusal, one cause")
	assert.Contains(t, c.Causes[1].Sentence, "one charge is kept: the deviation is in the status alone")
	assert.Contains(t, c.Counts(), "causes (3): 1 charges twice, 1 refuses wrongly, 1 format only; ")
	for _, r := range c.Requirements {
		assert.Equal(t, reports.Fail, r.Verdict, "without a charged replay nothing is left unjudged: %s", r.ID)
	}

	// The same retry answered 409 forever (not a refusal): still one
	// charge, its own cause, losing the payment rather than charging twice.
	stuck := []models.Exchange{create(`"k1"`, "f1", "r1", 201, "ch_1"), create(`"k1"`, "f1", "r1", 409, "")}
	c = reports.Certification{Requirements: []reports.RequirementResult{fail(certify.ReqLostResponse, "the retry answered 409", stuck...)}}
	certify.Explain(&c)
	require.Len(t, c.Causes, 1)
	assert.Equal(t, certify.CauseStatusOnly, c.Causes[0].ID)
	assert.Equal(t, reports.LosesPayment, c.Causes[0].Severity)
}

// A run with nothing failed has no causes, and its counts do not name them.
func TestExplainNothingFailed(t *testing.T) {
	c := reports.Certification{Requirements: []reports.RequirementResult{{ID: certify.ReqReplay, Verdict: reports.Pass}}}
	certify.Explain(&c)
	assert.Empty(t, c.Causes)
	assert.NotContains(t, c.Counts(), "causes")
}

// Four planted bugs (quoted-key-distinct, order-sensitive-fingerprint,
// errors-not-stored, no-inflight-lock) read as four causes, not seven:
// the two concurrency requirements are one missing in-flight lock, the
// decline run again, the declined key that charged and the property's
// "402, then 402" are one declined key not stored, and an equivalent
// request refused with 422 as another body is a wrong refusal.
func TestExplainFourBugsAreFourCauses(t *testing.T) {
	decline := func(digest string) models.Exchange {
		e := create(`"d"`, "fd", "rd", 402, "")
		e.ProviderBodyDigest = digest
		return e
	}
	c := reports.Certification{
		Requirements: []reports.RequirementResult{
			fail(certify.ReqReplay, "a retried decline answered 402 with another body, not the first 402", decline("a1"), decline("b2")),
			fail(certify.ReqConcurrent, "3 concurrent requests with one key: 3 charges",
				create(`"c"`, "fc", "rc", 201, "ch_6"), create(`"c"`, "fc", "rc", 201, "ch_7")),
			fail(certify.ReqQuotedKey, "the two forms are two keys",
				create(`"q"`, "fq", "rq", 201, "ch_1"), create(`q`, "fq", "rq", 201, "ch_2")),
			fail(certify.ReqShapes, "with the fields in another order it was refused with 422 as another body",
				create(`"s"`, "fs", "rs", 201, "ch_12"), create(`"s"`, "fs2", "rs", 422, "")),
			fail(certify.ReqDeclinedKey, "another card under the declined key answered 201 ch_19",
				decline("a1"), create(`"d"`, "fd2", "rd", 201, "ch_19")),
			fail(certify.ReqInflightMismatch, "two requests under one key with amounts 1099 and 1100 at once: 2 charges",
				create(`"i"`, "f1099", "ri", 201, "ch_20"), create(`"i"`, "f1100", "ri", 201, "ch_21")),
		},
		Deviations: []reports.Deviation{{Invariant: "replay-consistent", Verdict: reports.Fail,
			Message: "replay-consistent: order 1 intent 1: one key and body were answered 402, then 402: a completed key answers its first response"}},
	}
	certify.Explain(&c)
	ids, got := causesOf(c)
	assert.Equal(t, []string{certify.CauseDeclinesNotStored, certify.CauseNoInflightLock, "refused-422", certify.ReqQuotedKey}, ids, "worst first, then in the order found")
	assert.Equal(t, []string{"charges twice", certify.ReqConcurrent, certify.ReqInflightMismatch}, got[certify.CauseNoInflightLock])
	assert.Equal(t, []string{"charges twice", certify.ReqReplay, certify.ReqDeclinedKey, "replay-consistent"}, got[certify.CauseDeclinesNotStored],
		"the cause is as severe as the worst verdict that shows it")
	assert.Equal(t, []string{"refuses wrongly", certify.ReqShapes}, got["refused-422"])
	assert.Equal(t, []string{"format only", certify.ReqQuotedKey}, got[certify.ReqQuotedKey])
}

// TestExplainJoinsWhatTheRunTookForARequirementsCause: the property's
// deviations the run did not shrink because a requirement had shown their
// invariant belong to that requirement's cause, and an invariant a
// deviation's counterexample also breaks to that deviation's cause. Issue
// 24's four-mutant provider listed 7 causes, the last three of them
// ("the property's invariant … is violated") the same faults again.
func TestExplainJoinsWhatTheRunTookForARequirementsCause(t *testing.T) {
	c := reports.Certification{
		Requirements: []reports.RequirementResult{
			fail(certify.ReqConcurrent, "3 concurrent requests with one key: 3 charges",
				create(`"c"`, "fc", "rc", 201, "ch_6"), create(`"c"`, "fc", "rc", 201, "ch_7")),
			fail(certify.ReqShapes, "with the fields in another order it was refused with 422 as another body",
				create(`"s"`, "fs", "rs", 201, "ch_12"), create(`"s"`, "fs2", "rs", 422, "")),
		},
		Deviations: []reports.Deviation{
			{Invariant: "replay-consistent", Verdict: reports.Fail,
				Message: "replay-consistent: order 1 intent 1: one key and body were answered 201 ch_000041, then 201 ch_000045",
				Minimal: "not minimal: known (requirement concurrent-same-key-charges-once FAILed on replay-consistent in this run): not shrunk again"},
			{Invariant: "equivalent-requests-agree", Verdict: reports.Fail,
				Message: "equivalent-requests-agree: order 1 intent 1: the same request with other whitespace was refused with 422 as another body",
				Minimal: "not minimal: known (requirement equivalent-request-shapes-agree FAILed on equivalent-requests-agree in this run): not shrunk again"},
		},
		Invariants: []reports.InvariantResult{{Name: "at-most-one-charge-per-order", Verdict: reports.Fail,
			Reason: "deviation 1's counterexample (replay-consistent) also shows at-most-one-charge-per-order: the provider holds 2 charges for order 1"}},
	}
	certify.Explain(&c)
	ids, got := causesOf(c)
	assert.Equal(t, []string{certify.CauseNoInflightLock, "refused-422"}, ids)
	assert.Equal(t, []string{"charges twice", certify.ReqConcurrent, "replay-consistent", "at-most-one-charge-per-order"}, got[certify.CauseNoInflightLock])
	assert.Equal(t, []string{"refuses wrongly", certify.ReqShapes, "equivalent-requests-agree"}, got["refused-422"],
		"the same 422 refusal, one charge kept: the requirement's cause keeps its severity")
}

// causesOf is c's causes by id, in order, and each as its severity, then
// its requirements, then its invariants.
func causesOf(c reports.Certification) ([]string, map[string][]string) {
	got := map[string][]string{}
	var ids []string
	for _, k := range c.Causes {
		ids = append(ids, k.ID)
		got[k.ID] = append(append([]string{string(k.Severity)}, k.Requirements...), k.Invariants...)
	}
	return ids, got
}

// A replay that kept its charge and changed its status (201, then 200), and
// every requirement whose answer differs in the status alone, are one
// cause below a charge twice. Regression (breaker): a loopback provider
// answering replays 200 got 8 causes, its worst "charges twice" with one
// charge in its own evidence.
func TestExplainAStatusOnlyReplayIsOneLowerCause(t *testing.T) {
	stuck := []models.Exchange{create(`"k1"`, "f1", "r1", 201, "ch_1"), create(`"k1"`, "f1", "r1", 200, "ch_1")}
	c := reports.Certification{
		Requirements: []reports.RequirementResult{
			fail(certify.ReqLostResponse, "the retry answered 200", stuck...),
			fail(certify.ReqHangUp, "the retry answered 200", stuck...),
		},
		Deviations: []reports.Deviation{{Invariant: "replay-consistent", Verdict: reports.Fail,
			Message: "replay-consistent: order 1 intent 1: one key and body were answered 201 ch_000156, then 200 ch_000156: a completed key answers its first response"}},
	}
	certify.Explain(&c)
	ids, got := causesOf(c)
	assert.Equal(t, []string{certify.CauseStatusOnly}, ids)
	assert.Equal(t, []string{"loses or blocks a payment", certify.ReqLostResponse, certify.ReqHangUp, "replay-consistent"}, got[certify.CauseStatusOnly])
}

// A property deviation the run shrank to its end (found before the
// requirement's FAIL could make it known, or in another lane) still
// joins the cause of the requirement that shows its invariant.
func TestExplainShownJoinsAShrunkDeviation(t *testing.T) {
	c := reports.Certification{
		Requirements: []reports.RequirementResult{fail(certify.ReqConcurrent, "3 concurrent requests with one key: 3 charges",
			create(`"c"`, "fc", "rc", 201, "ch_6"), create(`"c"`, "fc", "rc", 201, "ch_7"))},
		Deviations: []reports.Deviation{{Invariant: "replay-consistent", Verdict: reports.Fail, Minimal: "minimal",
			Message: "replay-consistent: order 1 intent 1: one key and body were answered 201 ch_000251, then 201 ch_000250"}},
	}
	certify.ExplainShown(&c, map[string]string{"replay-consistent": certify.ReqConcurrent})
	ids, got := causesOf(c)
	assert.Equal(t, []string{certify.CauseNoInflightLock}, ids)
	assert.Equal(t, []string{"charges twice", certify.ReqConcurrent, "replay-consistent"}, got[certify.CauseNoInflightLock])
}

// One bug, a provider that stores a key per body (a key reused with
// another body is a new key, so it charges again), read as four causes,
// two of them bugs the provider does not have: a new user's own provider
// (written from docs/provider-api.md) got "declines-not-stored" while its
// declines were replayed, "no-inflight-lock" while
// concurrent-same-key-charges-once PASSed, and large-body-fingerprinted-whole
// "loses or blocks a payment" with two charges in its evidence. The
// requirements that send another body under one key and see it charged
// are the mismatch's one cause; a decline sent again and answered the same
// is no declines cause, and a lock that holds for one body is no lock cause.
func TestExplainAKeyStoredPerBodyIsOneCause(t *testing.T) {
	decline := create(`"d"`, "fd", "rd", 402, "")
	decline.ProviderBodyDigest = "same"
	c := reports.Certification{
		Requirements: []reports.RequirementResult{
			{ID: certify.ReqReplay, Verdict: reports.Pass},
			{ID: certify.ReqConcurrent, Verdict: reports.Pass},
			fail(certify.ReqMismatch, "another amount under the used key answered 201 ch_2, not 422",
				create(`"m"`, "f1099", "rm", 201, "ch_1"), create(`"m"`, "f1100", "rm", 201, "ch_2")),
			fail(certify.ReqDeclinedKey, "another card under the declined key answered 201 ch_19",
				decline, decline, create(`"d"`, "fd2", "rd", 201, "ch_19")),
			fail(certify.ReqInflightMismatch, "two requests under one key with amounts 1099 and 1100 at once: 2 charges",
				create(`"i"`, "f1099", "ri", 201, "ch_20"), create(`"i"`, "f1100", "ri", 201, "ch_21")),
			fail(certify.ReqLargeBody, "found [ch_34 ch_35], want exactly the charge ch_34",
				create(`"l"`, "fl1", "rl", 201, "ch_34"), create(`"l"`, "fl2", "rl", 201, "ch_35")),
		},
	}
	certify.Explain(&c)
	ids, got := causesOf(c)
	assert.Equal(t, []string{certify.ReqMismatch}, ids)
	assert.Equal(t, []string{"charges twice", certify.ReqMismatch, certify.ReqDeclinedKey, certify.ReqInflightMismatch, certify.ReqLargeBody}, got[certify.ReqMismatch])

	// Alone, a large body charged twice under one key charges twice.
	c = reports.Certification{Requirements: []reports.RequirementResult{c.Requirements[5]}}
	certify.Explain(&c)
	_, got = causesOf(c)
	assert.Equal(t, []string{"charges twice", certify.ReqLargeBody}, got[certify.ReqLargeBody])
}
