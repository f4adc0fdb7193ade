// Package certify certifies a remote payment provider's Idempotency-Key
// behaviour: a fixed list of requirements (Requirements; docs/profiles.md),
// each with a PASS / FAIL / INCONCLUSIVE verdict, the promise it was tested
// against (the draft or the provider's profile) and the exchanges that
// decided it, as a reports.Certification.
//
// Index:
//   - certify.go      — Options, Certify, Run, WriteJSON (certification.json).
//   - requirements.go — the requirement list, ids, costs.
//   - checks.go       — one check per requirement.
//   - driver.go       — sends through the fault proxy within the budgets;
//     settles unknown outcomes honouring Retry-After.
//   - linearize.go    — the porcupine check of a history against models.Spec.
//
// Traffic goes client → faults.Proxy (127.0.0.1, the fault schedule) →
// remote.Provider.Transport (budget meter, dialect) → the provider. A run
// never exceeds its budgets: a requirement that does not fit sends nothing
// and is INCONCLUSIVE.
package certify
