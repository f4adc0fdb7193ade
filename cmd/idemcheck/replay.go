package main

import (
	"context"
	"fmt"
	"io"
	"os"
)

const replayAbout = `Replay the rapid fail file FAILFILE once (-rapid.failfile, no new search, no new
fail file) against the provider and mutant it failed on: the report's replay line
names them (-provider, -mutant; a URL's key and profile come from IDEMCHECK_*).
Exit 1 when the failure came back, 0 when it did not.`

// replayMain is idemcheck replay.
func replayMain(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("replay", stderr, replayAbout)
	cfg := propertyFlags(fs, "embedded, wiremock or the http(s) URL the report names")
	verbose := fs.Bool("v", false, "print the harness's log (go test -v's)")
	pos, code, ok := parse(fs, args, stdout)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "idemcheck replay: want one FAILFILE")
		fs.Usage()
		return exitUsage
	}
	if _, err := os.Stat(pos[0]); err != nil {
		fmt.Fprintln(stderr, "idemcheck replay:", err)
		return exitUsage
	}
	targs := []string{"-rapid.failfile=" + pos[0], "-rapid.checks=0", "-rapid.nofailfile"}
	return property("replay", cfg, append(targs, testFlags(*verbose)...), stdout, stderr)
}
