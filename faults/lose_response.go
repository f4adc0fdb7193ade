package faults

import (
	"context"
	"net/http"
)

// KindLoseResponse forwards the request, lets the provider process it to
// the end, and then loses the response: the client sees a connection reset
// although the provider may have charged — the seed articles' "unknown
// outcome" in its purest form.
const KindLoseResponse Kind = "lose-response"

func init() {
	register(KindLoseResponse, kind{
		describe: func(Fault) string { return "lose-response" },
		apply: func(ctx context.Context, _ Fault, req *http.Request, forward forwardFunc) (*http.Response, error) {
			resp, err := forward(req)
			if err != nil {
				return nil, err
			}
			_ = resp.Body.Close()
			return nil, &InjectedError{Kind: KindLoseResponse, Msg: "connection reset by peer after the request was processed"}
		},
		forwards: true,
	})
}
