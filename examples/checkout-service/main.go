// Command checkout-service is an example checkout written only against
// docs/client-api.md and docs/provider-api.md: a bookstore's payment
// endpoint with the design of seed article 000 — one idempotency key per
// payment intent, stored before the first send; a failsafe-go pipeline
// (total timeout → retry → attempt timeout) like the article's Polly one;
// 409, timeouts and 5xx as unknown outcomes; and a reconciliation job
// that asks the provider by merchant_reference. idemcheck certifies it
// over HTTP (main_test.go).
//
//	go build -o checkout-service ./examples/checkout-service
//	IDEMCHECK_PROVIDER_URL=http://127.0.0.1:8080 ./checkout-service -addr 127.0.0.1:0
//
// (a built binary: killing `go run` would leave its compiled child serving).
//
// -bug plants one of four mistakes seen in the field, for the harness to
// catch: fresh-key-per-request, conflict-is-failure, no-card-guard,
// key-after-send.
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"time"
)

// settings are the service's flags.
type settings struct {
	provider       string
	attemptTimeout time.Duration
	totalTimeout   time.Duration
	retryDelay     time.Duration
	retries        int
	minAge         time.Duration
	abandonAfter   time.Duration
	bug            string
	apiKey         string
}

// bugs are the planted mistakes -bug selects.
var bugs = map[string]string{
	"":                      "none",
	"fresh-key-per-request": "every HTTP try gets a new Idempotency-Key",
	"conflict-is-failure":   "a 409 from the provider is answered as a failure (503), not as pending",
	"no-card-guard":         "a checkout with another card while an attempt is open starts a second intent",
	"key-after-send":        "the key is written to the store only after the provider answered",
}

func main() {
	var s settings
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback; port 0 picks a free one)")
	flag.StringVar(&s.provider, "provider", os.Getenv("IDEMCHECK_PROVIDER_URL"), "the provider's base URL (default $IDEMCHECK_PROVIDER_URL)")
	flag.DurationVar(&s.attemptTimeout, "attempt-timeout", 3*time.Second, "timeout of one try")
	flag.DurationVar(&s.totalTimeout, "total-timeout", 10*time.Second, "timeout of one checkout, retries included")
	flag.DurationVar(&s.retryDelay, "retry-delay", time.Second, "pause between tries")
	flag.IntVar(&s.retries, "retries", 3, "retries after the first try")
	flag.DurationVar(&s.minAge, "min-age", 2*time.Minute, "how old an open attempt must be before reconciliation asks the provider")
	flag.DurationVar(&s.abandonAfter, "abandon-after", 30*time.Minute, "how long after its last send an attempt without a charge is abandoned")
	flag.StringVar(&s.apiKey, "api-key", "", "the merchant's API key, sent as Authorization: Bearer <key> on every provider request (none: no Authorization)")
	flag.StringVar(&s.bug, "bug", "", "plant a mistake: fresh-key-per-request, conflict-is-failure, no-card-guard, key-after-send")
	flag.Parse()
	if err := run(*addr, s); err != nil {
		log.Fatal(err)
	}
}

func run(addr string, s settings) error {
	if _, ok := bugs[s.bug]; !ok {
		return fmt.Errorf("unknown -bug %q", s.bug)
	}
	if s.provider == "" {
		return errors.New("no provider: set -provider or IDEMCHECK_PROVIDER_URL")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	shop := newShop(s)
	srv := &http.Server{Handler: shop.routes(), ReadHeaderTimeout: 5 * time.Second}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	return srv.Serve(ln)
}
