package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// results are the benchmark lines of go test -bench output (the format of
// golang.org/design/14313-benchmark-format), by benchmark.
type results struct {
	order   []string // benchmark names, as first seen
	benches map[string]*bench
	// headers are the configuration lines (goos, goarch, cpu), first value
	// kept.
	headers map[string]string
	procs   string // the -N suffix of the names: GOMAXPROCS
}

// bench is one benchmark's runs: every value of every unit.
type bench struct {
	units  []string // as first seen
	values map[string][]float64
	runs   int
}

// parse reads go test -bench output (several packages may follow each
// other); lines that are not benchmark results or configuration are
// ignored.
func parse(r io.Reader) (*results, error) {
	res := &results{benches: map[string]*bench{}, headers: map[string]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if k, v, ok := strings.Cut(line, ": "); ok && (k == "goos" || k == "goarch" || k == "cpu") {
			if _, seen := res.headers[k]; !seen {
				res.headers[k] = strings.TrimSpace(v)
			}
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || len(f)%2 != 0 {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue // a benchmark's name followed by its log, not a result
		}
		name := strings.TrimPrefix(f[0], "Benchmark")
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				res.procs, name = name[i+1:], name[:i]
			}
		}
		b := res.benches[name]
		if b == nil {
			b = &bench{values: map[string][]float64{}}
			res.benches[name] = b
			res.order = append(res.order, name)
		}
		b.runs++
		for i := 2; i < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("benchtable: %q: value %q: %w", line, f[i], err)
			}
			unit := f[i+1]
			if _, seen := b.values[unit]; !seen {
				b.units = append(b.units, unit)
			}
			b.values[unit] = append(b.values[unit], v)
		}
	}
	return res, sc.Err()
}

// median is the median of name's values in unit, and whether there are
// any (the mean of the middle two for an even count, as benchstat).
func (r *results) median(name, unit string) (float64, bool) {
	b := r.benches[name]
	if b == nil || len(b.values[unit]) == 0 {
		return 0, false
	}
	s := slices.Sorted(slices.Values(b.values[unit]))
	n := len(s)
	if n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2, true
	}
	return s[n/2], true
}

// Targets of issue 15, on the 2-core machine.
const (
	// targetCalls is the most direct handler calls a 30-step sequence may cost.
	targetCalls = 40
	// targetDetect is the most median wall seconds to find a mutant.
	targetDetect = 0.5
	// targetFlat is the most a step's check at 1000 exchanges may cost
	// over one at 10 (issue 29).
	targetFlat = 3
)

// checkerRow is a step's check at each history length of
// BenchmarkCheckerStep, in µs.
func (r *results) checkerRow() (ratio, bool) {
	var cells []string
	for _, n := range []string{"10", "100", "1000"} {
		if v, ok := r.median("CheckerStep/step/exchanges="+n, "ns/op"); ok {
			cells = append(cells, num(v/1e3)+" µs at "+n)
		}
	}
	if len(cells) == 0 {
		return ratio{}, false
	}
	return ratio{"step check: CheckerStep of a step at 10 / 100 / 1000 exchanges", strings.Join(cells, " · "), ""}, true
}

// ratio is one derived row: what it divides, its value, the target.
type ratio struct {
	name, value, target string
}

// ratios are the harness's costs over the floor (BenchmarkProviderDirect's
// ns/op, one exchange), and how the costs grow; a row whose inputs are
// missing is left out.
func (r *results) ratios() []ratio {
	var out []ratio
	floor, okFloor := r.median("ProviderDirect", "ns/op")
	if perEx, ok := r.median("Property", "ns/exchange"); ok && okFloor {
		out = append(out, ratio{"Property ns/exchange ÷ ProviderDirect ns/op (harness cost per exchange over the floor)", num(perEx/floor) + "×", ""})
	}
	if seqs, ok := r.median("Property", "sequences/s"); ok && okFloor && seqs > 0 {
		calls := 1e9 / seqs / floor
		name := "direct handler calls per sequence (Property ns/sequence ÷ ProviderDirect ns/op)"
		if procs, ok := r.median("Property", "procs"); ok { // the property's GOMAXPROCS (fewerProcs), not the -N of its name
			name = fmt.Sprintf("direct handler calls per sequence (Property ns/sequence at GOMAXPROCS %d ÷ ProviderDirect ns/op)", int(procs))
		}
		out = append(out, ratio{name, num(calls), fmt.Sprintf("≤ %d: %s", targetCalls, gap(calls, targetCalls))})
	}
	out = append(out, r.systemsRows(floor, okFloor)...)
	if perEx, ok := r.median("Property", "ns/exchange"); ok {
		out = append(out, ratio{"µs per exchange (Property ns/exchange)", num(perEx / 1e3), ""})
	}
	if allocs, ok := r.median("Property", "allocs/exchange"); ok {
		out = append(out, ratio{"allocations per exchange (Property allocs/exchange)", num(allocs), ""})
	}
	if row, ok := r.checkerRow(); ok {
		out = append(out, row)
	}
	if par, ok := r.median("PropertyParallel", "sequences/s"); ok {
		if one, ok := r.median("Property", "sequences/s"); ok && one > 0 {
			procs, _ := r.median("PropertyParallel", "properties")
			out = append(out, ratio{fmt.Sprintf("speedup with every core (PropertyParallel sequences/s, %s properties at once, ÷ Property sequences/s)", strconv.Itoa(int(procs))), num(par/one) + "×", ""})
		}
	}
	if loop, ok := r.median("ProviderLoopback", "ns/op"); ok && okFloor {
		out = append(out, ratio{"ProviderLoopback ns/op ÷ ProviderDirect ns/op (what HTTP on loopback adds)", num(loop/floor) + "×", ""})
	}
	if long, ok := r.median("PropertySteps/steps=300", "ns/exchange"); ok {
		if short, ok := r.median("PropertySteps/steps=30", "ns/exchange"); ok {
			out = append(out, ratio{"PropertySteps ns/exchange, 300 steps ÷ 30 steps", num(long/short) + "×", "1× (linear in steps)"})
		}
	}
	if long, ok := r.median("CheckerStep/step/exchanges=1000", "ns/op"); ok {
		if short, ok := r.median("CheckerStep/step/exchanges=10", "ns/op"); ok {
			out = append(out, ratio{"CheckerStep ns/op of a step, 1000 exchanges ÷ 10 exchanges", num(long/short) + "×", fmt.Sprintf("≤ %d× (flat in history length): %s", targetFlat, gap(long/short, targetFlat))})
		}
	}
	if whole, ok := r.median("CheckerStep/whole/exchanges=1000", "ns/op"); ok {
		if step, ok := r.median("CheckerStep/step/exchanges=1000", "ns/op"); ok {
			out = append(out, ratio{"CheckerStep at 1000 exchanges, the whole history ÷ a step (what the incremental checker saves)", num(whole/step) + "×", ""})
		}
	}
	if row, ok := r.mutantRow(); ok {
		out = append(out, row)
	}
	return out
}

// systemsRows are how many of a sequence's direct handler calls the
// systems under test cost alone: the property's exchanges per sequence at
// SystemsDirect's cost (the reference client's checkout against the
// provider's handler, no harness), over the floor, and what share of the
// sequence that leaves to the harness (rapid, the fault layer, the
// history, the checks); then, with RapidFloor (rapid and synctest alone,
// a 30-step sequence of actions that only draw), the least a sequence can
// cost and what of the target that leaves for the rest of the harness's
// work (the fault layer, the history, the checks, skipped actions, the
// liveness phase).
func (r *results) systemsRows(floor float64, okFloor bool) []ratio {
	sys, ok := r.median("SystemsDirect", "ns/op")
	exs, okEx := r.median("Property", "exchanges/sequence")
	seqs, okSeq := r.median("Property", "sequences/s")
	if !ok || !okEx || !okSeq || !okFloor || seqs <= 0 || floor <= 0 {
		return nil
	}
	sysCalls, calls := exs*sys/floor, 1e9/seqs/floor
	out := []ratio{{
		"of those, the systems under test alone (Property exchanges/sequence × SystemsDirect ns/op ÷ ProviderDirect ns/op); the harness's share of a sequence",
		fmt.Sprintf("%s; %s %%", num(sysCalls), num(100*(1-sysCalls/calls))),
		"",
	}}
	if rapid, ok := r.median("RapidFloor", "ns/op"); ok {
		least, left := sysCalls+rapid/floor, "none"
		if targetCalls > least {
			left = num(targetCalls - least)
		}
		out = append(out, ratio{
			"the least a sequence can cost (the systems under test alone + RapidFloor ns/op ÷ ProviderDirect ns/op); what the target leaves the rest of the harness",
			fmt.Sprintf("%s; %s", num(least), left),
			"",
		})
	}
	return out
}

// mutantRow sums up MutantDetect: the slowest mutant's median wall time
// to detect, and how many are over targetDetect.
func (r *results) mutantRow() (ratio, bool) {
	slowest, worst, n, over := "", -1.0, 0, 0
	for _, name := range r.order {
		m, ok := strings.CutPrefix(name, "MutantDetect/")
		if !ok {
			continue
		}
		s, ok := r.median(name, "s-to-detect")
		if !ok {
			continue
		}
		n++
		if s > targetDetect {
			over++
		}
		if s > worst {
			slowest, worst = m, s
		}
	}
	if n == 0 {
		return ratio{}, false
	}
	return ratio{
		fmt.Sprintf("mutants: slowest median s-to-detect (%s); mutants over the target, of %d", slowest, n),
		fmt.Sprintf("%s s; %d", num(worst), over),
		fmt.Sprintf("< %s s each: %s", num(targetDetect), gap(worst, targetDetect)),
	}, true
}

// gap says how far v is from the target at most max.
func gap(v, max float64) string {
	if v <= max {
		return "met"
	}
	return num(v/max) + "× over"
}

// num formats v with three significant digits, without an exponent.
func num(v float64) string {
	switch a := math.Abs(v); {
	case a == 0:
		return "0"
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}

// write prints one Markdown table: a row per benchmark with the median of
// each of its units (and how many runs), then the ratio rows.
func (r *results) write(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "| benchmark | runs | medians | target |\n|---|---|---|---|\n")
	for _, name := range r.order {
		bn := r.benches[name]
		var cells []string
		for _, u := range bn.units {
			if u == "B/op" {
				continue // allocs/op and the per-exchange figures say it
			}
			v, _ := r.median(name, u)
			cells = append(cells, num(v)+" "+u)
		}
		fmt.Fprintf(&b, "| %s | %d | %s | |\n", name, bn.runs, strings.Join(cells, " · "))
	}
	for _, q := range r.ratios() {
		fmt.Fprintf(&b, "| **%s** | | **%s** | %s |\n", q.name, q.value, q.target)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
