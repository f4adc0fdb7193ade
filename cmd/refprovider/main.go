// Command refprovider serves the embedded reference provider
// (docs/provider-api.md) over HTTP on a loopback address, or one of the
// provider mutants of sut/mutants by name, so that the remote-provider path
// of the harness can be tested end to end without a sandbox.
//
// Usage:
//
//	refprovider [-addr 127.0.0.1:0] [-mutant NAME[,NAME...]] [-retention 24h] [-processing 0s]
//	            [-store memory|redis] [-redis URL] [-redis-prefix P] [-lease 30s]
//
// With -store redis the keys and charges live in Redis (seed article 004's
// store, sut/provider/redisstore) at -redis (default IDEMCHECK_REDIS_URL,
// else redis://127.0.0.1:6379/0) under -redis-prefix (default
// "idemcheck:refprovider:"): a refprovider restarted over the same Redis
// and prefix replays the keys and lists the charges of the one before it.
// The in-flight lock's lease is -lease (default 30 s, shorter than
// -retention). Redis mutants (redis-…) need -store redis.
//
// -mutant a,b serves several provider mutants at once, one provider with
// every bug planted (a run can then show several distinct deviations).
// A mutant whose bug shows only while a request is in flight gets the
// processing time it needs unless -processing is given: no-inflight-lock
// and redis-get-then-set 50ms, redis-lease-too-short 300ms,
// free-key-on-hangup 500ms, stuck-inflight 2s (InflightProcessing; the
// longest of the mutants served).
//
// With -mutant it first prints which mutant it serves. It prints
// "listening on http://ADDR" once it accepts connections (with
// -addr 127.0.0.1:0 the kernel picks a free port) and serves until it gets
// SIGINT or SIGTERM. Only loopback addresses are accepted. Time is real.
//
// It is `idemcheck serve` under its old name (both run
// internal/refprovider).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/idemcheck/idemcheck/internal/refprovider"
)

func main() {
	err := refprovider.Run(context.Background(), "refprovider", os.Args[1:], os.Stdout)
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case err != nil:
		fmt.Fprintln(os.Stderr, "refprovider:", err)
		os.Exit(2)
	}
}
