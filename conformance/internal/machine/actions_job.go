package machine

import (
	"time"

	"pgregory.net/rapid"
)

// jobDownStep is how long a time step with the reconciliation job down
// lasts: past the provider's 24 h retention window. Steps of jobDownFrom
// or longer (31 min, 22 h) may be drawn as one.
const (
	jobDownStep = 25 * time.Hour
	jobDownFrom = 30 * time.Minute
)

// drawJobDown draws, for a time step of jobDownFrom or more, whether it is
// instead jobDownStep (25 h) with the scheduled reconciliation job down
// all through it (a failed deploy, a stuck worker: a real case) — three
// in four. At one in two, stale-key-resend was caught within 100 checks
// at rapid's default 30 steps on seeds 1 and 3 of 1-5 (4 of seeds 1-8);
// at three in four on 1, 2, 3 and 5 (8 of seeds 1-10). A job that is
// down does not run at the end of the step, so an
// attempt left Open outlives the provider's retention window and the
// client must not resend its key (no-stale-key). It is a draw after the
// step's duration, so sequences without it keep their shape, and it
// shrinks toward the job that ran. The final reconciliation before
// liveness runs regardless: the job is repaired before convergence is
// judged.
func drawJobDown(t *rapid.T) bool {
	return ints(0, 3).Draw(t, "job_down") != 0
}
