package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/idemcheck/idemcheck/internal/refprovider"
)

// serveMain is idemcheck serve: cmd/refprovider's server (the same code,
// internal/refprovider), in this process, until SIGINT or SIGTERM.
func serveMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			fmt.Fprint(stdout, serveAbout)
			break
		}
	}
	err := refprovider.Run(ctx, "idemcheck serve", args, stdout)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return exitPass
	case err != nil:
		fmt.Fprintln(stderr, "idemcheck serve:", err)
		return exitUsage
	}
	return exitPass
}

const serveAbout = `Usage: idemcheck serve [flags]

Serve the embedded reference provider (docs/provider-api.md), or the provider
mutants of sut/mutants (-mutant a,b: several bugs at once), on a loopback
address, in real time. It prints "listening on http://ADDR" once it accepts
connections (-addr 127.0.0.1:0: a free port) and serves until SIGINT or
SIGTERM, then exits 0. Certify it with: idemcheck certify http://ADDR
--profile profiles/reference.json. Usage errors exit 2.

Flags:
`
