package provider

import "time"

// PlantedRefunds lists the deliberate bugs of the refunds endpoint
// (Planted.Refunds); sut/mutants sets them. The zero value is the
// reference: refunds keep their own key store.
type PlantedRefunds struct {
	// SharedKeys: one key store for every endpoint, whose record of
	// another endpoint's request is taken for a request still in flight:
	// a key a charge used, sent to /v1/refunds, answers 409 for the whole
	// retention window, so the refund's retries never get through.
	SharedKeys bool
	// ReplaysCharge: one key store for every endpoint, looked up by the key
	// alone: a key a charge completed with, sent to /v1/refunds, replays
	// the charge's stored 201 (a charge body answered to a refund).
	ReplaysCharge bool
	// NotIdempotent: the refunds endpoint ignores the key: every request
	// is processed, so a retry after a lost response refunds twice.
	NotIdempotent bool
}

// refundsPlanted reports whether a refunds bug is planted.
func (p *Provider) refundsPlanted() bool { return p.planted.Refunds != (PlantedRefunds{}) }

// plantedRefundTake is takeRefund's planted-bug branch, under p.mu; ok is
// false when the reference decision stands.
func (p *Provider) plantedRefundTake(key, fingerprint string, now time.Time) (_ *record, _ verdict, ok bool) {
	pr := p.planted.Refunds
	if pr.NotIdempotent { // planted bug: NotIdempotent
		return &record{fingerprint: fingerprint, startedAt: now, detached: true}, process, true
	}
	charge := p.keys[key]
	if charge == nil || charge.done && now.After(charge.completedAt.Add(p.retention)) {
		return nil, 0, false
	}
	switch {
	case pr.ReplaysCharge && charge.done: // planted bug: ReplaysCharge
		cp := *charge
		return &cp, replay, true
	case pr.SharedKeys || pr.ReplaysCharge: // planted bug: SharedKeys (and ReplaysCharge while in flight)
		return nil, inFlight, true
	}
	return nil, 0, false
}
