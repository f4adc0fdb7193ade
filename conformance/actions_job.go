package conformance

import "pgregory.net/rapid"

// toggleJob takes the scheduled reconciliation job down, or brings it back
// up: a job that is down is a real case (a failed deploy, a stuck worker),
// and while it is down neither the "reconcile" action nor a long
// time-passes step runs it, so an attempt may stay Open across the
// provider's retention window. The final reconciliation of finish runs
// whatever the state: the job is repaired before liveness is judged.
func (m *machine) toggleJob(*rapid.T) {
	m.jobDown = !m.jobDown
	args := "back up"
	if m.jobDown {
		args = "down"
	}
	m.step("reconciliation-job", args)
}
