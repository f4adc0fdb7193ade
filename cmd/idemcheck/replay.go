package main

import (
	"context"
	"fmt"
	"io"
	"os"
)

const replayAbout = `Replay the rapid fail file FAILFILE once (-rapid.failfile, no new search, no new
fail file) against the provider and mutant it failed on. The replay: line a failure
prints is this command with the flags it needs: -provider, -mutant, and for a URL the
-profile and -dialect the certification used (the profile decides what is judged);
the API keys come from IDEMCHECK_API_KEY (or -api-key-env) and IDEMCHECK_API_KEY_2.
Run it from the directory the run started in (fail file paths are relative to it).
Exit 1 when the failure came back, 0 when it did not.`

// replayMain is idemcheck replay.
func replayMain(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("replay", stderr, replayAbout)
	cfg := propertyFlags(fs, "embedded, wiremock or the http(s) URL the report names")
	profile := fs.String("profile", "", "provider profile `file` the certification used (IDEMCHECK_PROFILE, else none)")
	dialect := fs.String("dialect", "", "`dialect` of the provider: reference or stripe (IDEMCHECK_DIALECT, else the profile's)")
	keyEnv := fs.String("api-key-env", "IDEMCHECK_API_KEY", "environment `variable` holding the API key")
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
	// The remote provider is configured from the environment (conformance
	// FromEnv, remote.FromEnv): the flags go there, over it.
	for name, v := range map[string]string{"IDEMCHECK_PROFILE": *profile, "IDEMCHECK_DIALECT": *dialect, "IDEMCHECK_API_KEY": os.Getenv(*keyEnv)} {
		if v != "" {
			if err := os.Setenv(name, v); err != nil {
				fmt.Fprintln(stderr, "idemcheck replay:", err)
				return exitUsage
			}
		}
	}
	targs := []string{"-rapid.failfile=" + pos[0], "-rapid.checks=0", "-rapid.nofailfile"}
	return property("replay", cfg, append(targs, testFlags(*verbose)...), stdout, stderr)
}
