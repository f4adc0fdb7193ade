package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/conformance"
	"github.com/idemcheck/idemcheck/internal/rapidenv" // its init runs before rapid's: see rapidInput
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// Every input is checked before the first request: each refusal is one
// line naming the flag or variable the user gave, and exit 2.

// rapidInput is the first RAPID_* variable rapid could not parse (its own
// init would have panicked with a goroutine trace: internal/rapidenv
// unsets it first), named, or nil.
func rapidInput() error { return rapidenv.Err() }

// positiveFlags refuses a flag of fs among names that the user set to
// zero or below: left out it means the default, given it must mean what
// it says (--budget-requests -5 used to mean 20000).
func positiveFlags(fs *flag.FlagSet, names ...string) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if err != nil || !slices.Contains(names, f.Name) {
			return
		}
		g, _ := f.Value.(flag.Getter) // every flag type of package flag is one
		switch v := g.Get().(type) {
		case int:
			if v < 1 {
				err = fmt.Errorf("--%s %d: not a positive number (leave the flag out for the default)", f.Name, v)
			}
		case time.Duration:
			if v <= 0 {
				err = fmt.Errorf("--%s %s: not a positive duration (leave the flag out for the default)", f.Name, v)
			}
		}
	})
	return err
}

// reportDirInput is the report folder a run writes to, and how the user
// named it: --report-dir, IDEMCHECK_REPORT_DIR, or the default.
func reportDirInput(flagValue string) (dir, named string) {
	switch {
	case flagValue != "":
		return flagValue, "--report-dir " + flagValue
	case os.Getenv("IDEMCHECK_REPORT_DIR") != "":
		v := os.Getenv("IDEMCHECK_REPORT_DIR")
		return v, "IDEMCHECK_REPORT_DIR=" + v
	}
	return conformance.DefaultReportDir, "the report folder " + conformance.DefaultReportDir
}

// writableDir checks that the run can keep its reports in dir
// (reports.Writable), naming the folder as the user did.
func writableDir(dir, named string) error {
	if err := reports.Writable(dir); err != nil {
		return fmt.Errorf("%s: not a folder the run can write its reports to: %v", named, err)
	}
	return nil
}

// baselineInput loads the baseline the flag names (it wins over
// IDEMCHECK_BASELINE, which is then unset for the run) and refuses one
// that cannot be read, naming --baseline.
func baselineInput(path string) error {
	if path == "" {
		return nil
	}
	if err := os.Unsetenv("IDEMCHECK_BASELINE"); err != nil {
		return err
	}
	if _, err := conformance.LoadBaseline(path); err != nil {
		if why := errors.Unwrap(err); why != nil {
			err = why // LoadBaseline names IDEMCHECK_BASELINE
		}
		return fmt.Errorf("--baseline %s: %v", path, err)
	}
	return nil
}

// certifyInputs checks certify's flags and environment before anything
// is sent: budgets and checks set to zero or below, the provider
// (conformance.Provider.Validate: URL, keys, profile), the baseline, the
// IDEMCHECK_* variables the run reads, and the report folder.
func certifyInputs(fs *flag.FlagSet, p *conformance.Provider) error {
	if err := positiveFlags(fs, "budget-requests", "budget-charges", "budget-duration", "checks", "concurrency"); err != nil {
		return err
	}
	if err := hookInputs(fs); err != nil {
		return err
	}
	if err := p.Validate(); err != nil {
		return err
	}
	if err := baselineInput(p.Baseline); err != nil {
		return err
	}
	if _, err := conformance.FromEnv(); err != nil {
		return err
	}
	return writableDir(reportDirInput(p.ReportDir))
}

// providerInput refuses a provider that is not embedded, wiremock or an
// http(s) URL, naming -provider or IDEMCHECK_PROVIDER.
func providerInput(flagValue, provider string) error {
	if provider == "" || provider == conformance.ProviderEmbedded || provider == conformance.ProviderWireMock || remote.IsURL(provider) {
		return nil
	}
	named := "IDEMCHECK_PROVIDER=" + provider
	if flagValue != "" {
		named = "--provider " + flagValue
	}
	return fmt.Errorf("%s: not embedded, wiremock or an http(s) URL", named)
}

// hookInputs refuses a --hook-* flag given as "" the way it refuses one
// of blanks ("empty command"): an empty flag would otherwise mean no
// hook, silently.
func hookInputs(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if err == nil && strings.HasPrefix(f.Name, "hook-") && f.Name != "hook-timeout" && f.Value.String() == "" {
			err = fmt.Errorf("hook %s: empty command", strings.ReplaceAll(strings.TrimPrefix(f.Name, "hook-"), "-", "_"))
		}
	})
	return err
}
