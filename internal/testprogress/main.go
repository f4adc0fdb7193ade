// Command testprogress turns `go test -json` on its stdin into progress a
// person can follow: a line per package as it ends (ok / FAIL, its time
// and how many tests ran), the full output of every test that failed, a
// line per top-level test slower than 10 s, and every 30 s a line naming
// the packages still running. It exits 1 when a test, a package or a
// build failed, or when the stream ends with packages still running (the
// go command died), so the make recipe that pipes into it fails too.
//
//	go test -json ./... | go run ./internal/testprogress
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"time"
)

func main() {
	os.Exit(run(os.Stdin, os.Stdout, time.NewTicker(heartbeatEvery).C))
}

// heartbeatEvery is how often the packages still running are named.
const heartbeatEvery = 30 * time.Second

// maxLine bounds one line of the stream; a longer one (a test printing a
// huge value) is cut.
const maxLine = 1 << 20

// run reads the stream until it ends, writing progress to out, with a
// heartbeat on each tick, and returns the exit status.
func run(in io.Reader, out io.Writer, tick <-chan time.Time) int {
	lines := make(chan []byte)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 64*1024), maxLine)
		for sc.Scan() {
			lines <- append([]byte(nil), sc.Bytes()...)
		}
	}()
	p := newProgress(out, time.Now)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				return p.end()
			}
			p.line(l)
		case <-tick:
			p.heartbeat()
		}
	}
}

// write is fmt.Fprintf to the progress output; a failed write (a closed
// pipe) is not the tests' failure and is ignored.
func write(w io.Writer, format string, args ...any) {
	_, _ = fmt.Fprintf(w, format, args...)
}
