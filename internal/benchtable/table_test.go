package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sample is go test -bench output of two packages, as make bench writes
// it: the floor 20 000 ns per exchange (median of 19 000, 20 000, 30 000),
// the property 400 000 ns per exchange and 100 sequences/s (10 ms each:
// 500 direct calls), a log line and a -v line in between.
const sample = `goos: linux
goarch: amd64
pkg: github.com/idemcheck/idemcheck/sut/provider
cpu: Test CPU
BenchmarkProviderDirect-2     	   50000	     19000 ns/op	     52631 exchanges/s	    5178 B/op	      59 allocs/op
BenchmarkProviderDirect-2     	   50000	     30000 ns/op	     33333 exchanges/s	    5178 B/op	      59 allocs/op
BenchmarkProviderDirect-2     	   50000	     20000 ns/op	     50000 exchanges/s	    5178 B/op	      59 allocs/op
BenchmarkProviderLoopback-2   	   10000	    100000 ns/op	     10000 exchanges/s	   10678 B/op	     134 allocs/op
PASS
ok  	github.com/idemcheck/idemcheck/sut/provider	4.831s
pkg: github.com/idemcheck/idemcheck/sut/client
BenchmarkSystemsDirect-2     	   50000	     60000 ns/op	     16666 exchanges/s	   13283 B/op	     161 allocs/op
PASS
ok  	github.com/idemcheck/idemcheck/sut/provider	4.831s
goos: linux
pkg: github.com/idemcheck/idemcheck/conformance
cpu: Other CPU
BenchmarkProperty
    bench_property_test.go:12: a log line
BenchmarkProperty-2   	     140	  10000000 ns/op	       800 allocs/exchange	      2500 exchanges/s	        25 exchanges/sequence	    400000 ns/exchange	        100 sequences/s	 3804193 B/op	    9893 allocs/op
BenchmarkPropertyParallel-2   	     140	  10000000 ns/op	       170 sequences/s	 2 properties
BenchmarkPropertySteps/steps=30-2   	     100	  10000000 ns/op	    300000 ns/exchange
BenchmarkPropertySteps/steps=300-2   	     2	  900000000 ns/op	    900000 ns/exchange
BenchmarkRapidFloor-2   	     1000	  100000 ns/op	    30 steps/sequence
BenchmarkCheckerStep/step/exchanges=10-2         	    7137	    100000 ns/op	        11.00 exchanges
BenchmarkCheckerStep/whole/exchanges=10-2         	    7137	    100000 ns/op	        11.00 exchanges
BenchmarkCheckerStep/step/exchanges=1000-2       	       8	 150000000 ns/op	      1002 exchanges
BenchmarkCheckerStep/whole/exchanges=1000-2       	       8	 600000000 ns/op	      1002 exchanges
BenchmarkMutantDetect/fast-2 	      10	 310189267 ns/op	         1.000 checks-to-detect	         0.01 s-to-detect
BenchmarkMutantDetect/slow-2 	      10	 310189267 ns/op	         9.000 checks-to-detect	         2 s-to-detect
PASS
`

func TestParseKeepsEveryRunAndUnit(t *testing.T) {
	res, err := parse(strings.NewReader(sample))
	require.NoError(t, err)
	assert.Equal(t, []string{"ProviderDirect", "ProviderLoopback", "SystemsDirect", "Property", "PropertyParallel", "PropertySteps/steps=30", "PropertySteps/steps=300", "RapidFloor",
		"CheckerStep/step/exchanges=10", "CheckerStep/whole/exchanges=10", "CheckerStep/step/exchanges=1000", "CheckerStep/whole/exchanges=1000", "MutantDetect/fast", "MutantDetect/slow"}, res.order)
	assert.Equal(t, 3, res.benches["ProviderDirect"].runs)
	assert.Equal(t, []string{"ns/op", "exchanges/s", "B/op", "allocs/op"}, res.benches["ProviderDirect"].units)
	assert.Equal(t, "2", res.procs)
	assert.Equal(t, "Test CPU", res.headers["cpu"], "the first package's header is kept")
	m, ok := res.median("ProviderDirect", "ns/op")
	require.True(t, ok)
	assert.Equal(t, 20000.0, m, "the median, not the mean (23 000)")
	_, ok = res.median("ProviderDirect", "no-such-unit")
	assert.False(t, ok)
}

func TestMedianOfAnEvenCountIsTheMeanOfTheMiddleTwo(t *testing.T) {
	res, err := parse(strings.NewReader("BenchmarkX-2 1 10 ns/op\nBenchmarkX-2 1 40 ns/op\nBenchmarkX-2 1 20 ns/op\nBenchmarkX-2 1 30 ns/op\n"))
	require.NoError(t, err)
	m, _ := res.median("X", "ns/op")
	assert.Equal(t, 25.0, m)
}

func TestRatiosToTheFloor(t *testing.T) {
	res, err := parse(strings.NewReader(sample))
	require.NoError(t, err)
	got := map[string]ratio{}
	for _, q := range res.ratios() {
		name := strings.SplitN(q.name, " ", 2)[0]
		if strings.HasPrefix(q.name, "CheckerStep at") {
			name = "CheckerStep at"
		}
		got[name] = q
	}
	assert.Equal(t, "20.0×", got["Property"].value, "400 000 ns per exchange over a 20 000 ns floor")
	assert.Equal(t, "500", got["direct"].value, "10 ms a sequence is 500 calls of 20 µs")
	assert.Equal(t, "≤ 40: 12.5× over", got["direct"].target)
	assert.Equal(t, "75.0; 85.0 %", got["of"].value, "25 exchanges of 60 µs are 75 calls of 20 µs, 15 % of the 500")
	assert.Equal(t, "80.0; none", got["the"].value, "75 calls of the systems under test and 5 of rapid (100 µs) leave nothing of 40")
	assert.Equal(t, "5.00×", got["ProviderLoopback"].value)
	assert.Equal(t, "3.00×", got["PropertySteps"].value)
	assert.Equal(t, "1500×", got["CheckerStep"].value)
	assert.Equal(t, "≤ 3× (flat in history length): 500× over", got["CheckerStep"].target)
	assert.Equal(t, "400", got["µs"].value)
	assert.Equal(t, "800", got["allocations"].value)
	assert.Equal(t, "100 µs at 10 · 150000 µs at 1000", got["step"].value)
	assert.Equal(t, "1.70×", got["speedup"].value, "170 sequences/s on two properties over 100 on one")
	assert.Contains(t, got["speedup"].name, "2 properties")
	assert.Equal(t, "4.00×", got["CheckerStep at"].value, "600 ms whole over 150 ms a step")
	assert.Equal(t, "2.00 s; 1", got["mutants:"].value)
	assert.Contains(t, got["mutants:"].name, "(slow)")
	assert.Equal(t, "< 0.5 s each: 4.00× over", got["mutants:"].target)
}

// The handler-call row names the GOMAXPROCS the property ran at when the
// benchmark reports it (a run lowers it: fewerProcs), not the -N suffix.
func TestCallsRowNamesTheProcsThePropertyRanAt(t *testing.T) {
	res, err := parse(strings.NewReader("BenchmarkProviderDirect-2 1 1000 ns/op\nBenchmarkProperty-2 1 1 ns/op 1000 sequences/s 1 ns/exchange 1 procs\n"))
	require.NoError(t, err)
	var names []string
	for _, q := range res.ratios() {
		if strings.HasPrefix(q.name, "direct") {
			names = append(names, q.name)
			assert.Equal(t, "1000", q.value)
		}
	}
	require.Len(t, names, 1)
	assert.Contains(t, names[0], "at GOMAXPROCS 1")
}

// The least row says what of the target is left for the harness's own work
// when the systems under test and rapid leave some.
func TestLeastRowSaysWhatTheTargetLeaves(t *testing.T) {
	res, err := parse(strings.NewReader("BenchmarkProviderDirect-2 1 1000 ns/op\nBenchmarkSystemsDirect-2 1 2000 ns/op\n" +
		"BenchmarkProperty-2 1 1 ns/op 100 sequences/s 10 exchanges/sequence\nBenchmarkRapidFloor-2 1 5000 ns/op\n"))
	require.NoError(t, err)
	for _, q := range res.ratios() {
		if strings.HasPrefix(q.name, "the least") {
			assert.Equal(t, "25.0; 15.0", q.value, "10 exchanges of 2 µs and 5 µs of rapid are 25 calls of 1 µs")
			return
		}
	}
	t.Fatal("no least row")
}

func TestATargetMetSaysSo(t *testing.T) {
	res, err := parse(strings.NewReader("BenchmarkProviderDirect-2 1 1000 ns/op\nBenchmarkProperty-2 1 1 ns/op 40000 sequences/s 1 ns/exchange\n"))
	require.NoError(t, err)
	for _, q := range res.ratios() {
		if strings.HasPrefix(q.name, "direct") {
			assert.Equal(t, "25.0", q.value)
			assert.Equal(t, "≤ 40: met", q.target)
			return
		}
	}
	t.Fatal("no direct-calls row")
}

func TestWriteIsOneTableWithTheRatiosLast(t *testing.T) {
	res, err := parse(strings.NewReader(sample))
	require.NoError(t, err)
	var b strings.Builder
	require.NoError(t, res.write(&b))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, 2+14+13, b.String())
	assert.Equal(t, "| ProviderDirect | 3 | 20000 ns/op · 50000 exchanges/s · 59.0 allocs/op | |", lines[2])
	assert.True(t, strings.HasPrefix(lines[len(lines)-1], "| **mutants:"), lines[len(lines)-1])
}

func TestNoResultsIsAnError(t *testing.T) {
	var out strings.Builder
	assert.Error(t, run(nil, strings.NewReader("PASS\n"), &out))
}

// BenchmarkCertifyMutant's rows become one row per mutant, a pair of
// cells per processing time: what was spent to the first detection and
// what found it; a mutant never found says so.
func TestCertifyTable(t *testing.T) {
	in := `cpu: Test CPU
BenchmarkCertifyMutant/a/processing=0s-2 	1	100 ns/op	0 by-property	7.000 charges-to-detect	1.000 detected	8.000 requests-to-detect	0.1 s-to-detect
BenchmarkCertifyMutant/b/processing=0s-2 	1	100 ns/op	0 by-property	537.0 charges-to-detect	0 detected	1204 requests-to-detect	8 s-to-detect
BenchmarkCertifyMutant/a/processing=300ms-2 	1	100 ns/op	1.000 by-property	19.00 charges-to-detect	1.000 detected	25.00 requests-to-detect	2 s-to-detect
`
	res, err := parse(strings.NewReader(in))
	require.NoError(t, err)
	var b strings.Builder
	require.NoError(t, res.writeCertify(&b))
	assert.Contains(t, b.String(), "| provider mutant | requests, charges at 0s | found by at 0s | requests, charges at 300ms | found by at 300ms |")
	assert.Contains(t, b.String(), "| `a` | 8, 7 | requirement | 25, 19 | property |")
	assert.Contains(t, b.String(), "| `b` | 1204, 537 | not found | | |")
	b.Reset()
	plain, err := parse(strings.NewReader(sample))
	require.NoError(t, err)
	require.NoError(t, plain.writeCertify(&b))
	assert.Empty(t, b.String(), "no certify rows, no table")
}
