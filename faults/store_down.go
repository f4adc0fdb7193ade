package faults

import (
	"context"
	"net/http"
)

// KindStoreDown forwards the request to a provider whose idempotency store
// (Redis, sut/provider/redisstore) cannot be reached while it serves this
// request: every command on the keys fails as against a server that
// refuses connections. The provider must refuse (503) and process nothing;
// above all it must never process without holding the key's lock. Drawn
// only when the provider runs on a store (StoreScheduleGen); the provider
// reads it with StoreDown.
const KindStoreDown Kind = "store-down"

type storeDownKey struct{}

func init() {
	register(KindStoreDown, kind{
		describe: func(Fault) string { return "store-down" },
		apply: func(ctx context.Context, _ Fault, req *http.Request, forward forwardFunc) (*http.Response, error) {
			return forward(req.WithContext(context.WithValue(ctx, storeDownKey{}, true)))
		},
		forwards: true,
	})
}

// StoreDown reports whether the request behind ctx got a store-down fault:
// its provider's key store is unreachable while it is served (wire it to
// redisstore.Config.Unreachable).
func StoreDown(ctx context.Context) bool {
	down, _ := ctx.Value(storeDownKey{}).(bool)
	return down
}
