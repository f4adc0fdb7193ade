// Command refprovider serves the embedded reference provider
// (docs/provider-api.md) over HTTP on a loopback address, or one of the
// provider mutants of sut/mutants by name, so that the remote-provider path
// of the harness can be tested end to end without a sandbox.
//
// Usage:
//
//	refprovider [-addr 127.0.0.1:0] [-mutant NAME] [-retention 24h] [-processing 0s]
//
// It prints "listening on http://ADDR" once it accepts connections (with
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
	"syscall"
	"time"

	"github.com/idemcheck/idemcheck/sut/mutants"
	"github.com/idemcheck/idemcheck/sut/provider"
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
	mutant := fs.String("mutant", "", "serve the provider mutant `NAME` from sut/mutants instead of the reference")
	retention := fs.Duration("retention", provider.DefaultRetention, "key retention window")
	processing := fs.Duration("processing", 0, "processing time of each request before it commits")
	if err := fs.Parse(args); err != nil {
		return err
	}
	h, err := Handler(*mutant, *retention, *processing)
	if err != nil {
		return err
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

// Handler is the provider refprovider serves: the reference provider with
// retention and a processing delay, or the provider mutant called mutant.
// A client mutant is an error: refprovider serves providers only.
func Handler(mutant string, retention, processing time.Duration) (http.Handler, error) {
	cfg := provider.Config{Retention: retention}
	if processing > 0 {
		cfg.BeforeCommit = func(r *http.Request) {
			t := time.NewTimer(processing)
			defer t.Stop()
			select {
			case <-t.C:
			case <-r.Context().Done():
			}
		}
	}
	if mutant != "" {
		m, err := mutants.Lookup(mutant)
		if err != nil {
			return nil, err
		}
		if m.Provider == nil {
			return nil, fmt.Errorf("mutant %q is a client mutant; refprovider serves provider mutants only", mutant)
		}
		m.Provider(&cfg)
	}
	return provider.New(cfg), nil
}

// Listen listens on addr, which must name a loopback IP (127.0.0.1, ::1)
// or "localhost".
func Listen(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if host != "localhost" {
		ip := net.ParseIP(host)
		if ip == nil || !ip.IsLoopback() {
			return nil, fmt.Errorf("-addr %s is not a loopback address (127.0.0.1 or ::1)", addr)
		}
	}
	return net.Listen("tcp", addr)
}
