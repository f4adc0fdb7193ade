package main

import (
	"context"
	"errors"
	"flag"
	"io"

	"github.com/idemcheck/idemcheck/internal/refprovider"
)

// serveMain is idemcheck serve: cmd/refprovider's server (the same code,
// internal/refprovider), in this process, until SIGINT or SIGTERM.
func serveMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("serve", stderr)
	err := refprovider.RunFlags(ctx, fs, args, stdout)
	switch {
	case errors.Is(err, flag.ErrHelp):
		help(stdout, fs)
		return exitPass
	case errors.Is(err, refprovider.ErrUsage): // the flag package said why
		return usageError(stderr, fs, "")
	case err != nil:
		return usageError(stderr, fs, err.Error())
	}
	return exitPass
}

const serveAbout = `Serve the embedded reference provider (docs/provider-api.md), or the provider
mutants of sut/mutants (-mutant a,b: several bugs at once), on a loopback
address, in real time. It prints "listening on http://ADDR" once it accepts
connections (the default -addr 127.0.0.1:0 picks a free port; the line names
it) and serves until SIGINT or SIGTERM, then exits 0. Certify it with:
idemcheck certify http://ADDR --profile profiles/reference.json.

-dialect stripe serves the same provider in Stripe's API (docs/provider-api.md,
"Served in the stripe dialect"): form bodies on POST /v1/charges, /v1/refunds and
/v1/payment_intents (confirm=true), retrieve, list and search by
metadata['merchant_reference']; Stripe's error JSON and statuses
(https://docs.stripe.com/api/errors); Stripe's idempotency rules
(https://docs.stripe.com/api/idempotent_requests): opaque bare keys of at most
255 characters, optional; a reused key with other parameters 400
idempotency_error; a concurrent request 409 idempotency_key_in_use;
Idempotent-Replayed: true on a replay; test tokens such as tok_visa, pm_card_visa
and tok_chargeDeclined. Certify it with: idemcheck certify http://ADDR
--dialect stripe --profile profiles/reference-stripe.json.`
