package main

import (
	"fmt"
	"io"
	"strings"
)

// certifyPrefix names BenchmarkCertifyMutant's rows:
// CertifyMutant/<mutant>/processing=<P>.
const certifyPrefix = "CertifyMutant/"

// writeCertify prints, when the input holds BenchmarkCertifyMutant rows,
// one row per provider mutant with, at each processing time, the
// requests and charges a certification spent up to its first detection
// and what found it (a requirement, the property, or nothing: "not found",
// with what the whole run spent). Nothing when there are no such rows.
func (r *results) writeCertify(w io.Writer) error {
	var mutants, times []string
	seen := map[string]bool{}
	for _, name := range r.order {
		rest, ok := strings.CutPrefix(name, certifyPrefix)
		if !ok {
			continue
		}
		m, p, ok := strings.Cut(rest, "/processing=")
		if !ok {
			continue
		}
		if !seen["m"+m] {
			seen["m"+m] = true
			mutants = append(mutants, m)
		}
		if !seen["p"+p] {
			seen["p"+p] = true
			times = append(times, p)
		}
	}
	if len(mutants) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("\n| provider mutant |")
	for _, p := range times {
		fmt.Fprintf(&b, " requests, charges at %s | found by at %s |", p, p)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|---|", len(times)) + "\n")
	for _, m := range mutants {
		fmt.Fprintf(&b, "| `%s` |", m)
		for _, p := range times {
			b.WriteString(r.certifyCells(certifyPrefix + m + "/processing=" + p))
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// certifyCells are one mutant's two cells at one processing time.
func (r *results) certifyCells(name string) string {
	req, ok := r.median(name, "requests-to-detect")
	if !ok {
		return " | |"
	}
	ch, _ := r.median(name, "charges-to-detect")
	found, _ := r.median(name, "detected")
	byProp, _ := r.median(name, "by-property")
	by := "requirement"
	switch {
	case found < 1:
		by = "not found"
	case byProp >= 1:
		by = "property"
	}
	return fmt.Sprintf(" %.0f, %.0f | %s |", req, ch, by)
}
