package faults

import (
	"context"
	"net/http"
)

// KindOutage makes the provider unreachable for the rest of the step: the
// request it is drawn for and every later request of the same step (until
// the next Schedule, or Heal) are lost on the way in, as to a host that
// drops every connection attempt, so each try waits for the client's own
// attempt timeout (bounded by DropBound) and a call ends on a timed-out
// try. The provider sees none of them. Reconciliation must still converge
// once the outage heals.
const KindOutage Kind = "outage"

func init() {
	register(KindOutage, kind{
		describe: func(Fault) string { return "outage" },
		apply: func(ctx context.Context, _ Fault, _ *http.Request, _ forwardFunc) (*http.Response, error) {
			if wait(ctx, DropBound) {
				return nil, &InjectedError{Kind: KindOutage, Msg: "no response: the provider is unreachable (outage)"}
			}
			return nil, ctx.Err()
		},
	})
}
