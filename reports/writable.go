package reports

import (
	"errors"
	"os"
)

// Writable creates the report folder dir when it is missing and writes
// (then removes) a file in it: a run checks this before its first
// request, so that one whose reports could not be kept sends nothing.
// The error is the file system's.
func Writable(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".idemcheck-write-check-*")
	if err != nil {
		return err
	}
	_, werr := f.Write([]byte("idemcheck\n"))
	cerr := f.Close()
	_ = os.Remove(f.Name())
	return errors.Join(werr, cerr)
}
