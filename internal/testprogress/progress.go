package main

import (
	"encoding/json"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json), with the build
// events of Go 1.24 (ImportPath, build-output, build-fail).
type event struct {
	Action     string
	Package    string
	Test       string
	Elapsed    float64
	Output     string
	ImportPath string
}

// slowTest is the elapsed time from which a passing top-level test gets a
// line of its own.
const slowTest = 10 * time.Second

// maxKept bounds the output kept for one test (or a package's own
// output) until it passes or fails; the tail is kept.
const maxKept = 256 << 10

// pkgState is a package whose tests are running.
type pkgState struct {
	started time.Time
	done    int      // top-level tests ended
	live    []string // top-level tests started and not ended, oldest first
	output  string   // the package's own output (no test), for a failure
}

// progress is the state of the stream read so far.
type progress struct {
	out     io.Writer
	now     func() time.Time
	start   time.Time
	running map[string]*pkgState
	output  map[string]string // package + "\x00" + test → its output so far
	failed  bool
	passed  int // packages ok
	failPkg []string
}

func newProgress(out io.Writer, now func() time.Time) *progress {
	return &progress{out: out, now: now, start: now(), running: map[string]*pkgState{}, output: map[string]string{}}
}

// line handles one line of the stream; a line that is not JSON is printed
// as it is.
func (p *progress) line(l []byte) {
	var e event
	if err := json.Unmarshal(l, &e); err != nil || e.Action == "" {
		write(p.out, "%s\n", l)
		return
	}
	switch e.Action {
	case "build-output":
		write(p.out, "%s", e.Output)
	case "build-fail":
		p.failed = true
	case "start":
		p.running[e.Package] = &pkgState{started: p.now()}
	case "run":
		if s := p.running[e.Package]; s != nil && !strings.Contains(e.Test, "/") {
			s.live = append(s.live, e.Test)
		}
	case "output":
		p.keep(e)
	case "pass", "fail", "skip":
		if e.Test == "" {
			p.packageEnded(e)
		} else {
			p.testEnded(e)
		}
	}
}

// keep appends e's output to its test's (or its package's), keeping at
// most maxKept bytes.
func (p *progress) keep(e event) {
	if e.Test == "" {
		if s := p.running[e.Package]; s != nil {
			s.output = tail(s.output + e.Output)
		}
		return
	}
	k := e.Package + "\x00" + e.Test
	p.output[k] = tail(p.output[k] + e.Output)
}

func tail(s string) string {
	if len(s) > maxKept {
		return "…" + s[len(s)-maxKept:]
	}
	return s
}

func (p *progress) testEnded(e event) {
	k := e.Package + "\x00" + e.Test
	out := p.output[k]
	delete(p.output, k)
	top := !strings.Contains(e.Test, "/")
	if s := p.running[e.Package]; s != nil && top {
		s.done++
		for i, n := range s.live {
			if n == e.Test {
				s.live = append(s.live[:i], s.live[i+1:]...)
				break
			}
		}
	}
	d := time.Duration(e.Elapsed * float64(time.Second)).Round(100 * time.Millisecond)
	switch {
	case e.Action == "fail":
		p.failed = true
		write(p.out, "--- FAIL %s %s (%s)\n%s", short(e.Package), e.Test, d, out)
	case top && e.Action == "pass" && d >= slowTest:
		write(p.out, "    pass %s %s (%s)\n", short(e.Package), e.Test, d)
	}
}

func (p *progress) packageEnded(e event) {
	s := p.running[e.Package]
	delete(p.running, e.Package)
	done := 0
	if s != nil {
		done = s.done
	}
	d := time.Duration(e.Elapsed * float64(time.Second)).Round(100 * time.Millisecond)
	switch {
	case e.Action == "fail":
		p.failed = true
		p.failPkg = append(p.failPkg, e.Package)
		if s != nil {
			// Tests that never ended (a timeout, a SIGQUIT, a crash): their
			// output holds the goroutine dump or the panic.
			for _, n := range s.live {
				k := e.Package + "\x00" + n
				write(p.out, "--- never ended: %s %s\n%s", short(e.Package), n, p.output[k])
				delete(p.output, k)
			}
			if s.output != "" {
				write(p.out, "%s", s.output)
			}
		}
		write(p.out, "FAIL %s (%s, %d tests)\n", e.Package, d, done)
	case done == 0:
		write(p.out, "?    %s [no tests]\n", e.Package)
	default:
		p.passed++
		write(p.out, "ok   %s (%s, %d tests)\n", e.Package, d, done)
	}
}

// heartbeat names the packages still running, how long each has run, its
// tests ended and the oldest of its tests still running.
func (p *progress) heartbeat() {
	if len(p.running) == 0 {
		return
	}
	names := make([]string, 0, len(p.running))
	for n := range p.running {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		s := p.running[n]
		parts[i] = short(n) + " " + p.now().Sub(s.started).Round(time.Second).String() + ", " + strconv.Itoa(s.done) + " tests done"
		if len(s.live) > 0 {
			// The oldest test still running, the likeliest to hang.
			parts[i] += ", in " + s.live[0]
			if len(s.live) > 1 {
				parts[i] += " and " + strconv.Itoa(len(s.live)-1) + " more"
			}
		}
	}
	write(p.out, "... %s: running %s\n", p.now().Sub(p.start).Round(time.Second), strings.Join(parts, "; "))
}

// end is called when the stream ends: the exit status, after a last line.
func (p *progress) end() int {
	took := p.now().Sub(p.start).Round(time.Second)
	if len(p.running) > 0 {
		names := make([]string, 0, len(p.running))
		for n := range p.running {
			names = append(names, n)
		}
		sort.Strings(names)
		write(p.out, "the test output ended with %s still running (the go command or a test binary died)\n", strings.Join(names, ", "))
		return 1
	}
	if p.failed {
		write(p.out, "FAIL: %d packages ok, failed: %s (%s)\n", p.passed, strings.Join(p.failPkg, ", "), took)
		return 1
	}
	write(p.out, "PASS: %d packages ok (%s)\n", p.passed, took)
	return 0
}

// short drops the module path from a package path.
func short(pkg string) string {
	if s, ok := strings.CutPrefix(pkg, "github.com/idemcheck/idemcheck/"); ok {
		return s
	}
	return pkg
}
