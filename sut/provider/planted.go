package provider

import (
	"net/http"
	"time"
)

// StuckAfter is how long processing may take, measured with Config.Now
// around the BeforeCommit hook, before the StuckInflight bug gives up on
// it. The reference provider has no such worker timeout.
const StuckAfter = time.Second

// Planted lists the provider's deliberate bugs (mutants). Each field
// switches on one deviation from docs/provider-api.md; sut/mutants sets them to
// prove the harness catches each provider fault class. The zero value is
// the reference provider. Combinations are allowed but not designed for.
type Planted struct {
	// NoInflightLock: check-then-act without an in-flight mark (the race of
	// seed article 004). The key store is only consulted for COMPLETED
	// records: a request whose key has no completed record is processed
	// even while another request with that key is being processed, so two
	// concurrent requests with one key both charge. The result is stored
	// when processing ends (last writer wins).
	NoInflightLock bool
	// ReplayNewCharge: a completed key is processed again instead of
	// replayed (a new charge id each time); the new result overwrites the
	// stored one when it completes. A mismatch is still 422.
	ReplayNewCharge bool
	// ConflictAfterCompletion: a completed key answers 409 instead of the
	// stored response. A mismatch is still 422.
	ConflictAfterCompletion bool
	// NoFingerprint: the fingerprint is ignored, so the same key with
	// another body gets the first response replayed (or 409 while in
	// flight) instead of 422.
	NoFingerprint bool
	// ErrorsNotStored: only 2xx results are stored; after a 402 the key is
	// forgotten, so the same key may run again (and with another card,
	// charge).
	ErrorsNotStored bool
	// StuckInflight: processing that takes longer than StuckAfter (from the
	// key being taken, just before BeforeCommit, to just after it, both by
	// Config.Now) fails with 500 and creates nothing, and leaves the key in
	// flight forever: every later request with it gets 409 (or 422 with
	// another body).
	StuckInflight bool
	// QuotedKeyDistinct: the key is the raw header value, so "abc" (quoted)
	// and abc (bare) are two keys. Malformed values are still 400.
	QuotedKeyDistinct bool
	// Refunds are the bugs of the refunds endpoint (refund_planted.go).
	Refunds PlantedRefunds
	// PlantedShapes are the request-shape and account bugs (planted_shapes.go).
	PlantedShapes
	// PlantedKeys are the key edge-case and blocked-key bugs (planted_keys.go).
	PlantedKeys
	// PlantedEdges are the body, lookup, in-flight hint, stray header and
	// lock lease bugs (planted_edges.go; issue 25).
	PlantedEdges
	// ReplayDropsLocation: a replay of a 201 carries no Location header
	// (the first answer does). planted_headers.go.
	ReplayDropsLocation bool
	// DeclineNotStored: a 402 is not stored (the key is freed) and its
	// body names no decline id, so a decline run again is byte-identical
	// to a replay, and the same key with another card then charges.
	DeclineNotStored bool
	// DeclinedKeyRecharges: a stored 402's key with another body (another
	// card) is processed as a new request, and may charge, instead of 422;
	// the key keeps its decline.
	DeclinedKeyRecharges bool
	// InflightMismatchCharges: a request under a key in flight with
	// another body is processed as a new request, and may charge, instead
	// of 409 or 422; the key keeps the first request.
	InflightMismatchCharges bool
	// ErrorsNotProblemDetails: the error answers keep their JSON body but
	// are sent as application/json, not RFC 9457's
	// application/problem+json.
	ErrorsNotProblemDetails bool
	// FreeKeyOnHangUp: when the client hangs up while its request is being
	// processed (the request context is cancelled), the charge is still
	// made but the key is released without storing the response, so the
	// client's retry under the key charges again (planted_hangup.go).
	FreeKeyOnHangUp bool
}

// plantedTake is take's planted-bug branch, called under p.mu with the
// key's live record (nil if none or expired). ok is false when no planted
// bug applies and the reference verdict stands. A record returned with
// verdict process and detached set is not in p.keys while it is processed.
func (p *Provider) plantedTake(fingerprint string, rec *record, now time.Time) (_ *record, _ verdict, ok bool) {
	if p.looseTake(fingerprint, rec) { // planted bugs: DeclinedKeyRecharges, InflightMismatchCharges
		return &record{fingerprint: fingerprint, startedAt: now, detached: true, loose: true}, process, true
	}
	switch {
	case p.planted.NoInflightLock && (rec == nil || !rec.done): // planted bug: NoInflightLock
	case p.leaseOver(fingerprint, rec, now): // planted bug: LockLease
	case rec == nil || !rec.done || rec.fingerprint != fingerprint:
		return nil, 0, false
	case p.planted.ConflictAfterCompletion: // planted bug: ConflictAfterCompletion
		return nil, inFlight, true
	case p.planted.ReplayNewCharge: // planted bug: ReplayNewCharge
	default:
		return nil, 0, false
	}
	// NoInflightLock on a key with no completed record, or ReplayNewCharge
	// on a completed one, or LockLease on a key whose lease ran out:
	// process it, unmarked.
	return &record{fingerprint: fingerprint, startedAt: now, detached: true}, process, true
}

// plantedCommit is process's planted-bug branch, called under p.mu once
// rec holds its result.
func (p *Provider) plantedCommit(key string, rec *record) {
	switch {
	case rec.loose: // planted bugs: DeclinedKeyRecharges, InflightMismatchCharges: never stored
	case (p.planted.ErrorsNotStored && (rec.status < 200 || rec.status > 299)) ||
		(p.planted.DeclineNotStored && rec.status == http.StatusPaymentRequired): // planted bugs: ErrorsNotStored, DeclineNotStored
		if p.keys[key] == rec {
			delete(p.keys, key)
		}
	case rec.detached: // planted bug: NoInflightLock, ReplayNewCharge
		p.keys[key] = rec // last writer wins
	}
}

// stuck reports whether processing rec, finishing at now, overran
// StuckAfter under the StuckInflight bug.
func (p *Provider) stuck(rec *record, now time.Time) bool {
	return p.planted.StuckInflight && now.Sub(rec.startedAt) > StuckAfter // planted bug: StuckInflight
}

// writeStuck answers the StuckInflight bug's 500.
func writeStuck(w http.ResponseWriter) {
	writeProblem(w, http.StatusInternalServerError, "processing timed out; the outcome is unknown")
}
