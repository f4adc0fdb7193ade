package conformance

import "pgregory.net/rapid"

// drawJobDown draws, for a time step of half a day or more, whether the
// scheduled reconciliation job was down all through it (a failed deploy, a
// stuck worker: a real case) — about one step in four. A job that is down
// does not run at the end of the step, so an attempt left Open can outlive
// the provider's retention window (25 h steps) and the client must not
// resend its key (no-stale-key). It shrinks toward a job that ran. The
// final reconciliation before liveness runs regardless: the job is
// repaired before convergence is judged.
func drawJobDown(t *rapid.T) bool {
	return rapid.IntRange(0, 3).Draw(t, "job_down") == 3
}
