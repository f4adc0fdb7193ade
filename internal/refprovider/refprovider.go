// Package refprovider is the body of `idemcheck serve` and of
// cmd/refprovider: the embedded reference provider (docs/provider-api.md),
// or one or more provider mutants of sut/mutants, served over HTTP on a
// loopback address until SIGINT or SIGTERM. Both commands call Run, so
// they share one code path and one set of flags (see Run).
package refprovider

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

// Run parses args as the command name (its flags: -addr 127.0.0.1:0,
// -dialect reference|stripe, -mutant NAME[,NAME...], -retention 24h,
// -processing 0s, -store memory|redis, -redis URL, -redis-prefix P,
// -lease 30s, -key-form quoted|bare|both, the reference dialect only), serves
// until ctx ends or SIGINT or SIGTERM arrives (then it shuts the server
// down within 5 s and returns nil), and writes what it serves and the line
// "listening on http://ADDR" to out. Only loopback addresses are accepted.
// Usage text goes to stderr, or to out for -h, which returns
// flag.ErrHelp.
func Run(ctx context.Context, name string, args []string, out io.Writer) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			fs.SetOutput(out) // asked for: the usage is the output
		}
	}
	return RunFlags(ctx, fs, args, out)
}

// ErrUsage wraps the error of args RunFlags could not parse (the flag
// package has printed it to fs's output).
var ErrUsage = errors.New("usage")

// RunFlags is Run with the caller's flag set (its name, output and
// Usage, as idemcheck serve prints its own help): it defines Run's flags
// on fs and parses args with it. A parse error wraps ErrUsage; -h returns
// flag.ErrHelp.
func RunFlags(ctx context.Context, fs *flag.FlagSet, args []string, out io.Writer) error {
	addr := fs.String("addr", "127.0.0.1:0", "loopback `host:port` to listen on (port 0: a free one)")
	dialect := fs.String("dialect", server.DialectReference, "`API` to speak: reference (docs/provider-api.md) or stripe (Stripe's form bodies, errors and idempotency rules; docs/provider-api.md, \"Served in the stripe dialect\")")
	mutant := fs.String("mutant", "", "serve the provider mutant `NAME` from sut/mutants instead of the reference (a,b: several at once)")
	retention := fs.Duration("retention", provider.DefaultRetention, "key retention window")
	processing := fs.Duration("processing", 0, "processing time of each request before it commits")
	store := fs.String("store", "memory", "where keys and charges live: `memory` or redis")
	redisURL := fs.String("redis", redisstore.URL(), "Redis `URL` for -store redis (default from "+redisstore.EnvURL+")")
	prefix := fs.String("redis-prefix", "idemcheck:refprovider:", "key `prefix` in Redis: the same prefix after a restart keeps the keys and charges")
	lease := fs.Duration("lease", redisstore.DefaultLease, "in-flight lock lease with -store redis")
	keyForm := fs.String("key-form", server.KeyFormBoth, "the Idempotency-Key forms accepted: `quoted` (a Structured Field String), bare (the bare token; the other form is answered 400) or both")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %w", ErrUsage, err)
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
	if err == nil {
		h, err = server.InDialect(h, *dialect)
	}
	if err == nil && *keyForm != server.KeyFormBoth && *dialect == server.DialectStripe {
		err = fmt.Errorf("-key-form %q: the stripe dialect takes opaque bare keys; -key-form is for the reference dialect", *keyForm)
	}
	if err == nil {
		h, err = server.OnlyKeyForm(h, *keyForm)
	}
	if err != nil {
		return err
	}
	if *dialect == server.DialectStripe {
		fmt.Fprintln(out, "speaking the stripe dialect (form bodies, Stripe's errors, opaque bare keys)")
	}
	if *keyForm != server.KeyFormBoth {
		fmt.Fprintf(out, "accepting the Idempotency-Key only as the %s form\n", *keyForm)
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
