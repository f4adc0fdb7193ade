package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// stream is a `go test -json` stream of two packages: a passes (one slow
// test), b fails one subtest.
const stream = `{"Action":"start","Package":"github.com/idemcheck/idemcheck/a"}
{"Action":"start","Package":"github.com/idemcheck/idemcheck/b"}
{"Action":"run","Package":"github.com/idemcheck/idemcheck/a","Test":"TestSlow"}
{"Action":"output","Package":"github.com/idemcheck/idemcheck/a","Test":"TestSlow","Output":"=== RUN   TestSlow\n"}
{"Action":"run","Package":"github.com/idemcheck/idemcheck/b","Test":"TestB"}
{"Action":"run","Package":"github.com/idemcheck/idemcheck/b","Test":"TestB/sub"}
{"Action":"output","Package":"github.com/idemcheck/idemcheck/b","Test":"TestB/sub","Output":"    b_test.go:9: boom\n"}
{"Action":"fail","Package":"github.com/idemcheck/idemcheck/b","Test":"TestB/sub","Elapsed":0.01}
{"Action":"fail","Package":"github.com/idemcheck/idemcheck/b","Test":"TestB","Elapsed":0.02}
{"Action":"output","Package":"github.com/idemcheck/idemcheck/b","Output":"FAIL\n"}
{"Action":"fail","Package":"github.com/idemcheck/idemcheck/b","Elapsed":0.5}
{"Action":"pass","Package":"github.com/idemcheck/idemcheck/a","Test":"TestSlow","Elapsed":12.34}
{"Action":"pass","Package":"github.com/idemcheck/idemcheck/a","Elapsed":12.5}
`

func TestProgress_PackagesFailuresAndSlowTests(t *testing.T) {
	var out strings.Builder
	status := run(strings.NewReader(stream), &out, nil)
	assert.Equal(t, 1, status, "a failed test fails the command")
	got := out.String()
	assert.Contains(t, got, "--- FAIL b TestB/sub (0s)\n    b_test.go:9: boom\n", "a failure shows its output")
	assert.Contains(t, got, "FAIL github.com/idemcheck/idemcheck/b (500ms, 1 tests)\n")
	assert.Contains(t, got, "    pass a TestSlow (12.3s)\n", "a slow test gets a line")
	assert.Contains(t, got, "ok   github.com/idemcheck/idemcheck/a (12.5s, 1 tests)\n")
	assert.NotContains(t, got, "=== RUN", "a passing test's output is not shown")
	assert.Contains(t, got, "FAIL: 1 packages ok, failed: github.com/idemcheck/idemcheck/b")
}

func TestProgress_AllPassingExitsZero(t *testing.T) {
	passing := `{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestP"}
{"Action":"pass","Package":"p","Test":"TestP","Elapsed":0.1}
{"Action":"pass","Package":"p","Elapsed":0.2}
`
	var out strings.Builder
	assert.Equal(t, 0, run(strings.NewReader(passing), &out, nil))
	assert.Contains(t, out.String(), "ok   p (200ms, 1 tests)\nPASS: 1 packages ok")
}

// A stream that ends while a package runs (the go command was killed, a
// test binary crashed without its package's verdict) is a failure.
func TestProgress_AStreamCutShortFails(t *testing.T) {
	var out strings.Builder
	assert.Equal(t, 1, run(strings.NewReader(`{"Action":"start","Package":"p"}`+"\n"), &out, nil))
	assert.Contains(t, out.String(), "p still running")
}

func TestProgress_BuildFailureShowsTheCompilerAndFails(t *testing.T) {
	s := `{"ImportPath":"p","Action":"build-output","Output":"p/x.go:3:1: syntax error\n"}
{"ImportPath":"p","Action":"build-fail"}
{"Action":"start","Package":"p"}
{"Action":"output","Package":"p","Output":"FAIL\tp [build failed]\n"}
{"Action":"fail","Package":"p","Elapsed":0}
`
	var out strings.Builder
	assert.Equal(t, 1, run(strings.NewReader(s), &out, nil))
	assert.Contains(t, out.String(), "p/x.go:3:1: syntax error\n")
	assert.Contains(t, out.String(), "FAIL\tp [build failed]\n")
}

func TestProgress_HeartbeatNamesWhatIsRunning(t *testing.T) {
	var out strings.Builder
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	p := newProgress(&out, func() time.Time { return now })
	p.line([]byte(`{"Action":"start","Package":"github.com/idemcheck/idemcheck/conformance"}`))
	p.line([]byte(`{"Action":"run","Package":"github.com/idemcheck/idemcheck/conformance","Test":"TestCertify"}`))
	now = now.Add(90 * time.Second)
	p.heartbeat()
	assert.Equal(t, "... 1m30s: running conformance 1m30s, 0 tests done, in TestCertify\n", out.String())
}

// Regression: the heartbeat named the test that started last, which had
// long passed, while another hung ("in TestWireMockCatchesFreshKeyPerRequest"
// for five minutes of a CI run); and a package killed by a timeout or
// SIGQUIT lost the goroutine dump its hung test printed.
func TestProgress_HangShowsTheTestStillRunningAndItsDump(t *testing.T) {
	var out strings.Builder
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	p := newProgress(&out, func() time.Time { return now })
	const pkg = "github.com/idemcheck/idemcheck/conformance"
	for _, l := range []string{
		`{"Action":"start","Package":"` + pkg + `"}`,
		`{"Action":"run","Package":"` + pkg + `","Test":"TestHangs"}`,
		`{"Action":"run","Package":"` + pkg + `","Test":"TestQuick"}`,
		`{"Action":"pass","Package":"` + pkg + `","Test":"TestQuick","Elapsed":1}`,
	} {
		p.line([]byte(l))
	}
	now = now.Add(time.Minute)
	p.heartbeat()
	assert.Contains(t, out.String(), "1 tests done, in TestHangs\n")
	p.line([]byte(`{"Action":"output","Package":"` + pkg + `","Test":"TestHangs","Output":"goroutine 7 [chan receive]:\n"}`))
	p.line([]byte(`{"Action":"fail","Package":"` + pkg + `","Elapsed":60}`))
	assert.Contains(t, out.String(), "--- never ended: conformance TestHangs\ngoroutine 7 [chan receive]:\n")
}
