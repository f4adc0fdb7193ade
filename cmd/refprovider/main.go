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
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/provider"
	"github.com/idemcheck/idemcheck/sut/provider/redisstore"
	"github.com/idemcheck/idemcheck/sut/provider/server"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "refprovider:", err)
		os.Exit(2)
	}
}

// run parses args, serves until ctx ends or a signal arrives, and writes
// the listening line to out.
func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("refprovider", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:0", "loopback `host:port` to listen on (port 0: a free one)")
	mutant := fs.String("mutant", "", "serve the provider mutant `NAME` from sut/mutants instead of the reference (a,b: several at once)")
	retention := fs.Duration("retention", provider.DefaultRetention, "key retention window")
	processing := fs.Duration("processing", 0, "processing time of each request before it commits")
	store := fs.String("store", "memory", "where keys and charges live: `memory` or redis")
	redisURL := fs.String("redis", redisstore.URL(), "Redis `URL` for -store redis (default from "+redisstore.EnvURL+")")
	prefix := fs.String("redis-prefix", "idemcheck:refprovider:", "key `prefix` in Redis: the same prefix after a restart keeps the keys and charges")
	lease := fs.Duration("lease", redisstore.DefaultLease, "in-flight lock lease with -store redis")
	if err := fs.Parse(args); err != nil {
		return err
	}
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "processing" })
	names, err := server.MutantNames(*mutant)
	if err != nil {
		return err
	}
	for _, name := range names {
		if d, ok := InflightProcessing[name]; ok && !set && d > *processing {
			*processing = d
			fmt.Fprintf(out, "processing %s per request: %s shows only while a request is in flight (-processing to change)\n", d, name)
		}
	}
	var h http.Handler
	switch *store {
	case "memory":
		h, err = Handler(*mutant, *retention, *processing)
	case "redis":
		c, cerr := redisstore.Connect(ctx, *redisURL)
		if cerr != nil {
			return cerr
		}
		defer func() { _ = c.Close() }()
		h, err = server.RedisHandler(*mutant, *retention, *processing, server.Redis{Client: c, Prefix: *prefix, Lease: *lease})
		if err == nil {
			fmt.Fprintf(out, "keys and charges in Redis at %s under %s\n", reports.RedactURL(*redisURL), *prefix)
		}
	default:
		err = fmt.Errorf("-store %q: memory or redis", *store)
	}
	if err != nil {
		return err
	}
	if len(names) > 0 {
		fmt.Fprintf(out, "serving the provider mutant %s, not the reference provider\n", strings.Join(names, " + "))
	}
	ln, err := Listen(*addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	fmt.Fprintf(out, "listening on http://%s\n", ln.Addr())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// InflightProcessing is the processing time refprovider gives, unless told
// otherwise, to the provider mutants whose bug shows only while a request
// is in flight: two requests must overlap for a missing in-flight lock to
// charge twice, and a key stuck in flight must outlast a client's retries.
var InflightProcessing = map[string]time.Duration{
	"no-inflight-lock":      50 * time.Millisecond,
	"stuck-inflight":        2 * time.Second,
	"redis-get-then-set":    50 * time.Millisecond,
	"redis-lease-too-short": 300 * time.Millisecond, // outlives its 100 ms lease
	"free-key-on-hangup":    500 * time.Millisecond, // outlives the proxy's 100 ms hang-up
}

// Handler is server.Handler: the reference provider with retention and a
// processing delay, or the provider mutant called mutant.
func Handler(mutant string, retention, processing time.Duration) (http.Handler, error) {
	return server.Handler(mutant, retention, processing)
}

// Listen is server.Listen: it accepts loopback addresses only.
func Listen(addr string) (net.Listener, error) { return server.Listen(addr) }
