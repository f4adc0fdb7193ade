package run

import (
	"errors"
	"fmt"
	"os"
)

// writableReportDir creates dir when missing and writes (then removes) a
// file in it: a certification checks this before its first request, so
// that a run whose reports could not be kept sends nothing.
func writableReportDir(dir string) error {
	fail := func(err error) error {
		return fmt.Errorf("conformance: report folder %s: not a folder the run can write its reports to (nothing sent): %v", dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail(err)
	}
	f, err := os.CreateTemp(dir, ".idemcheck-write-check-*")
	if err != nil {
		return fail(err)
	}
	_, werr := f.Write([]byte("idemcheck\n"))
	cerr := f.Close()
	_ = os.Remove(f.Name())
	if err := errors.Join(werr, cerr); err != nil {
		return fail(err)
	}
	return nil
}
