package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

const replayAbout = `Replay the rapid fail file FAILFILE once (-rapid.failfile, no new search, no new
fail file) against the provider and mutant it failed on. The replay: line a failure
prints is this command with the flags it needs: -provider, -mutant, and for a URL the
-profile and -dialect the certification used (the profile decides what is judged);
the API keys come from IDEMCHECK_API_KEY (or -api-key-env) and IDEMCHECK_API_KEY_2.
Run it from the directory the run started in (fail file paths are relative to it).
A fail file that replays no sequence (rapid found it no longer valid: another rapid
version, or the provider's state or timing took the run another way) exits 3. The
path of the run's index.md is the one line on stdout.`

// replayMain is idemcheck replay.
func replayMain(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("replay", stderr)
	cfg := propertyFlags(fs, "embedded, wiremock or the http(s) URL the report names")
	profile := fs.String("profile", "", "provider profile `file` the certification used (IDEMCHECK_PROFILE, else none)")
	dialect := fs.String("dialect", "", "`dialect` of the provider: reference or stripe (IDEMCHECK_DIALECT, else the profile's)")
	keyEnv := fs.String("api-key-env", "IDEMCHECK_API_KEY", "environment `variable` holding the API key")
	pos, code, ok := parse(fs, args, stdout)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return usageError(stderr, fs, "want one FAILFILE")
	}
	if err := checkFailFile(pos[0]); err != nil {
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
	return property("replay", cfg, targs, stdout, stderr) // a file that replays no sequence: INCONCLUSIVE (noReplay)
}

// maxFailFile bounds a fail file's size: rapid's hold one draw a line.
const maxFailFile = 16 << 20

// checkFailFile refuses path unless it is a regular file of at most
// maxFailFile bytes in rapid's format: comment lines (#), then
// "<version>#<seed>", then one unsigned integer a line.
func checkFailFile(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxFailFile {
		return fmt.Errorf("%s is not a rapid fail file (a regular file of at most %d MiB)", path, maxFailFile>>20)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	head := true
	for line := range strings.SplitSeq(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if head {
			_, seed, ok := strings.Cut(line, "#")
			if _, err := strconv.ParseUint(seed, 10, 64); !ok || err != nil {
				return fmt.Errorf("%s is not a rapid fail file: its first line %q is not <version>#<seed>", path, line)
			}
			head = false
			continue
		}
		if _, err := strconv.ParseUint(line, 0, 64); err != nil {
			return fmt.Errorf("%s is not a rapid fail file: %q is not a draw", path, line)
		}
	}
	if head {
		return fmt.Errorf("%s is not a rapid fail file: it holds no data", path)
	}
	return nil
}
