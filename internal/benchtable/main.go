// Command benchtable prints the table of make bench: the median of every
// metric of every benchmark in go test -bench output (files named on the
// command line, or stdin), one row per benchmark, and the ratios to the
// floor of issue 15 (docs/BENCHMARKS.md says how to read them): the main
// job's cost per exchange over the embedded provider's handler called
// directly, a sequence's cost in direct handler calls (target ≤ 40), how
// the cost grows with steps and history length, and the slowest mutant's
// median time to detect (target < 0.5 s); with BenchmarkCertifyMutant's
// rows, a table of what a certification spends to find each provider
// mutant. A line above the table names
// the machine (cpu, GOMAXPROCS, Go version) and the date.
//
//	go test -run '^$' -bench . -count 5 ./sut/provider ./conformance | tee bench.txt
//	go run ./internal/benchtable bench.txt
package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(files []string, stdin io.Reader, out io.Writer) error {
	var in []io.Reader
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		in = append(in, f)
	}
	if len(in) == 0 {
		in = append(in, stdin)
	}
	res, err := parse(io.MultiReader(in...))
	if err != nil {
		return err
	}
	if len(res.order) == 0 {
		return fmt.Errorf("benchtable: no benchmark results in the input")
	}
	fmt.Fprintf(out, "cpu: %s; GOMAXPROCS %s; %s %s/%s; %s\n\n", res.headers["cpu"], res.procs,
		runtime.Version(), res.headers["goos"], res.headers["goarch"], time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	if err := res.write(out); err != nil {
		return err
	}
	return res.writeCertify(out)
}
