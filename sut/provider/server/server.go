// Package server serves the embedded reference provider, or one of the
// provider mutants of sut/mutants by name, over real HTTP on a loopback
// address: what cmd/refprovider runs, importable so that tests can start
// it in process.
package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemcheck/idemcheck/sut/mutants"
	"github.com/idemcheck/idemcheck/sut/provider"
	"github.com/idemcheck/idemcheck/sut/provider/redisstore"
)

// Handler is the provider to serve: the reference provider with retention
// (default 24h when not positive) and a processing delay before each
// request commits (0 for none), or the provider mutant called mutant —
// several at once when mutant is a comma-separated list ("no-fingerprint,
// replay-new-charge": each plants its bug in the one provider, applied in
// the order given), so that one run can show several distinct deviations.
// A client mutant, an unknown name or a name given twice is an error: only
// providers are served. Keys and charges live in memory (RedisHandler:
// in Redis).
func Handler(mutant string, retention, processing time.Duration) (http.Handler, error) {
	return handler(mutant, retention, processing, nil)
}

// Redis is where RedisHandler keeps the keys and charges.
type Redis struct {
	// Client is the connection (redisstore.Connect); the caller closes it.
	Client *redis.Client
	// Prefix starts every key written: the same prefix after a restart
	// finds the same keys and charges.
	Prefix string
	// Lease is the in-flight lock's lease; default redisstore.DefaultLease
	// (30 s).
	Lease time.Duration
}

// RedisHandler is Handler with the keys and charges in Redis (seed article
// 004's store, sut/provider/redisstore): the reference, or a provider
// mutant of the Redis store. An in-memory provider mutant is an error.
func RedisHandler(mutant string, retention, processing time.Duration, rd Redis) (http.Handler, error) {
	return handler(mutant, retention, processing, &rd)
}

func handler(mutant string, retention, processing time.Duration, rd *Redis) (http.Handler, error) {
	cfg := provider.Config{Retention: retention}
	scfg := redisstore.Config{Retention: retention}
	if rd != nil {
		scfg.Client, scfg.Prefix, scfg.Lease = rd.Client, rd.Prefix, rd.Lease
	}
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
	names, err := MutantNames(mutant)
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		m, err := mutants.Lookup(name)
		if err != nil {
			return nil, err
		}
		switch {
		case m.Provider == nil && m.RedisStore == nil:
			return nil, fmt.Errorf("mutant %q is a client mutant; refprovider serves provider mutants only", name)
		case m.RedisStore != nil && rd == nil:
			return nil, fmt.Errorf("mutant %q plants its bug in the Redis store; serve it with -store redis", name)
		case m.RedisStore != nil:
			m.RedisStore(&scfg)
		case rd != nil:
			return nil, fmt.Errorf("mutant %q plants its bug in the in-memory provider; serve it without -store redis", name)
		default:
			m.Provider(&cfg)
		}
	}
	if rd != nil {
		st, err := redisstore.New(scfg)
		if err != nil {
			return nil, err
		}
		cfg.Store = st
	}
	return provider.New(cfg), nil
}

// MutantNames splits a -mutant value ("a,b", spaces around a name
// allowed) into its names; "" is none. An empty name or one given twice is
// an error.
func MutantNames(list string) ([]string, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	var out []string
	seen := map[string]bool{}
	for n := range strings.SplitSeq(list, ",") {
		n = strings.TrimSpace(n)
		switch {
		case n == "":
			return nil, fmt.Errorf("mutant list %q has an empty name", list)
		case seen[n]:
			return nil, fmt.Errorf("mutant list %q names %s twice", list, n)
		}
		seen[n] = true
		out = append(out, n)
	}
	return out, nil
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

// Server is a provider served on a loopback port.
type Server struct {
	// URL is the base URL, "http://127.0.0.1:PORT".
	URL string
	srv *http.Server
	ln  net.Listener
	end chan error
}

// Start serves h on 127.0.0.1 at a free port until Close.
func Start(h http.Handler) (*Server, error) {
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{URL: "http://" + ln.Addr().String(), srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}, ln: ln, end: make(chan error, 1)}
	go func() { s.end <- s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the server, waiting at most 5 s for requests in progress.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if serr := <-s.end; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// The dialects a provider is served in (sut/remote's names).
const (
	// DialectReference is docs/provider-api.md.
	DialectReference = "reference"
	// DialectStripe is Stripe's API (provider.Provider.Stripe).
	DialectStripe = "stripe"
)

// InDialect is h, a handler of Handler or RedisHandler, speaking dialect:
// "reference" (or "") is h itself, "stripe" is the same provider behind
// the Stripe translation (provider.Provider.Stripe). Any other name is an
// error.
func InDialect(h http.Handler, dialect string) (http.Handler, error) {
	switch dialect {
	case DialectReference, "":
		return h, nil
	case DialectStripe:
		p, ok := h.(*provider.Provider)
		if !ok {
			return nil, fmt.Errorf("the stripe dialect serves the reference provider, not a %T", h)
		}
		return p.Stripe(), nil
	}
	return nil, fmt.Errorf("-dialect %q: reference or stripe", dialect)
}
