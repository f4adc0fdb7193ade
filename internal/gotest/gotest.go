// Package gotest runs one function that takes a *testing.T outside go
// test, for cmd/idemcheck: the conformance API runs under a *testing.T
// (rapid checks and shrinks through it, and the embedded provider's
// virtual time is a testing/synctest bubble, which needs a real one), so
// the CLI calls the same functions a user's go test does instead of a
// second code path.
//
// It uses testing.MainStart, the hook go test's generated main calls,
// with a minimal set of dependencies: no profiles, no fuzzing, no
// coverage. testing.MainStart is not covered by the Go 1 compatibility
// promise; go.mod pins the Go version it is built with.
package gotest

import (
	"errors"
	"flag"
	"io"
	"os"
	"reflect"
	"testing"
	"time"
)

// Run runs f as the test name, once, with the testing flags of args
// ("-test.v" for go test -v's output; none: quiet unless it fails). The
// testing package's output (failures, t.Log of a failed test, rapid's
// draws, the final PASS or FAIL) goes to out, os.Stderr when nil. It
// reports whether the test failed.
// It may be called once per process: the testing flags live on
// flag.CommandLine, which Run parses.
func Run(name string, args []string, out *os.File, f func(t *testing.T)) (failed bool, err error) {
	m := testing.MainStart(deps{}, []testing.InternalTest{{Name: name, F: f}}, nil, nil, nil)
	if flag.Parsed() {
		return false, errors.New("gotest: flag.CommandLine was parsed already")
	}
	if err := flag.CommandLine.Parse(append([]string{"-test.timeout=0"}, args...)); err != nil {
		return false, err
	}
	if out == nil {
		out = os.Stderr
	}
	stdout := os.Stdout
	os.Stdout = out // the testing package prints to os.Stdout
	defer func() { os.Stdout = stdout }()
	return m.Run() != 0, nil
}

// deps is the minimal testDeps testing.MainStart needs.
type deps struct{}

var errUnsupported = errors.New("gotest: not supported outside go test")

// corpusEntry is the testing package's fuzzing corpus entry (a type alias
// of this struct there).
type corpusEntry = struct {
	Parent     string
	Path       string
	Data       []byte
	Values     []any
	Generation int
	IsSeed     bool
}

func (deps) ImportPath() string                          { return "" }
func (deps) ModulePath() string                          { return "" }
func (deps) MatchString(pat, str string) (bool, error)   { return pat == "" || pat == str, nil }
func (deps) SetPanicOnExit0(bool)                        {}
func (deps) StartCPUProfile(io.Writer) error             { return errUnsupported }
func (deps) StopCPUProfile()                             {}
func (deps) StartTestLog(io.Writer)                      {}
func (deps) StopTestLog() error                          { return nil }
func (deps) WriteProfileTo(string, io.Writer, int) error { return errUnsupported }
func (deps) CoordinateFuzzing(time.Duration, int64, time.Duration, int64, int, []corpusEntry, []reflect.Type, string, string) error {
	return errUnsupported
}
func (deps) RunFuzzWorker(func(corpusEntry) error) error { return errUnsupported }
func (deps) ReadCorpus(string, []reflect.Type) ([]corpusEntry, error) {
	return nil, errUnsupported
}
func (deps) CheckCorpus([]any, []reflect.Type) error { return nil }
func (deps) ResetCoverage()                          {}
func (deps) SnapshotCoverage()                       {}
func (deps) InitRuntimeCoverage() (string, func(string, string) (string, error), func() float64) {
	return "", nil, nil
}
