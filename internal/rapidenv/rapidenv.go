// Package rapidenv checks the RAPID_* environment variables before
// pgregory.net/rapid reads them: rapid parses them in its package init and
// panics, with a goroutine trace, on a value it cannot parse
// (RAPID_SEED=abc), before main can say anything. cmd/idemcheck imports
// this package for its init, which runs before rapid's (the Go spec
// initialises, of the packages whose imports are ready, the first by
// import path: github.com/… before pgregory.net/…, and this package
// imports nothing rapid does not), and refuses the run with Err.
package rapidenv

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// err is the first unusable RAPID_* variable found at init, or nil.
var err error

func init() { err = check() }

// Err is the first RAPID_* variable rapid could not parse, as one line
// naming it ("RAPID_SEED=\"abc\" is not an unsigned integer"), or nil.
// Every such variable is unset at init, so that rapid's init does not
// panic on it; the caller must refuse the run when Err is not nil.
func Err() error { return err }

// kinds are the variables rapid reads at init (v1.3.0's
// loadCmdlineDefaults) and how it parses each.
var kinds = []struct{ name, kind string }{
	{"RAPID_CHECKS", "count"}, {"RAPID_STEPS", "count"}, {"RAPID_SEED", "seed"},
	{"RAPID_SHRINKTIME", "duration"}, {"RAPID_NOFAILFILE", "bool"}, {"RAPID_LOG", "bool"},
	{"RAPID_V", "bool"}, {"RAPID_DEBUG", "bool"}, {"RAPID_DEBUGVIS", "bool"},
}

// check unsets every RAPID_* variable rapid would panic on (or that
// holds a negative count), and returns the first as an error.
func check() error {
	var first error
	for _, k := range kinds {
		v, ok := os.LookupEnv(k.name)
		if !ok {
			continue
		}
		var bad string
		switch k.kind {
		case "count":
			if n, e := strconv.ParseInt(v, 0, strconv.IntSize); e != nil || n < 0 {
				bad = "is not a non-negative integer"
			}
		case "seed":
			if _, e := strconv.ParseUint(v, 0, 64); e != nil {
				bad = "is not a seed (an unsigned integer)"
			}
		case "duration":
			if _, e := time.ParseDuration(v); e != nil {
				bad = "is not a Go duration (\"30s\")"
			}
		case "bool":
			if _, e := strconv.ParseBool(v); e != nil {
				bad = "is not a boolean (true or false)"
			}
		}
		if bad == "" {
			continue
		}
		_ = os.Unsetenv(k.name)
		if first == nil {
			first = fmt.Errorf("%s=%q %s", k.name, v, bad)
		}
	}
	return first
}
