package faults

import (
	"context"
	"net/http"
)

// KindProviderCrash forwards the request to a provider on a durable store
// whose process is killed while it holds the request's key (after taking
// the lock, before committing) and restarted over the same store: the
// dead process commits nothing and releases nothing, and the client sees
// its connection reset. The key must not stay 409 beyond the lock's
// lease; a retry after it is processed once. A request that takes no key
// (a replay, a 409) is answered before the kill and its answer lost, as
// with lose-response. Drawn only when the provider runs on a store
// (StoreScheduleGen); the provider reads it with ProviderCrash.
const KindProviderCrash Kind = "provider-crash"

type crashKey struct{}

func init() {
	register(KindProviderCrash, kind{
		describe: func(Fault) string { return "provider-crash" },
		apply: func(ctx context.Context, _ Fault, req *http.Request, forward forwardFunc) (*http.Response, error) {
			resp, err := forward(req.WithContext(context.WithValue(ctx, crashKey{}, true)))
			if err != nil {
				return nil, err
			}
			_ = resp.Body.Close()
			return nil, &InjectedError{Kind: KindProviderCrash, Msg: "connection reset by peer: the provider process died"}
		},
		forwards: true,
	})
}

// ProviderCrash reports whether the request behind ctx got a
// provider-crash fault: its provider process is to die while it holds the
// request's key.
func ProviderCrash(ctx context.Context) bool {
	c, _ := ctx.Value(crashKey{}).(bool)
	return c
}
