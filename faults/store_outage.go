package faults

import (
	"context"
	"net/http"
)

// KindStoreOutage takes a provider's idempotency store down through its
// store-down hook (Lifecycle.StoreDown) just before the request it is
// drawn for is forwarded, and keeps it down over the rest of the step: the
// step's later requests reach a provider without its store. When the
// step's requests are done the store comes back (Transport.EndOutage:
// the store-up hook, then the readiness wait), before the step is judged.
// The provider must refuse (503 with Retry-After) and process nothing
// while it is down, and replay consistently once it is back. Drawn only
// against a URL with both store hooks (LifecycleScheduleGen); without a
// Transport.Lifecycle it passes. When the store-down hook fails the
// request is not forwarded: the client sees a transport error naming it.
const KindStoreOutage Kind = "store-outage"

func init() {
	register(KindStoreOutage, kind{
		describe: func(Fault) string { return "store-outage" },
		apply: func(ctx context.Context, _ Fault, req *http.Request, forward forwardFunc) (*http.Response, error) {
			t := lifecycleFrom(ctx)
			if t == nil || t.Lifecycle == nil {
				return forward(req)
			}
			if err := t.Lifecycle.StoreDown(context.WithoutCancel(ctx)); err != nil {
				return nil, &InjectedError{Kind: KindStoreOutage, Msg: "no response: " + err.Error()}
			}
			return forward(req)
		},
		forwards: true,
	})
}
