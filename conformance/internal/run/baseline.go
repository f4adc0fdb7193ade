package run

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/reports"
)

// Baseline is conformance.Baseline (the file's format is there): the
// acknowledged deviations and requirement ids of a run.
type Baseline []string

// ParseBaseline is conformance.ParseBaseline: a baseline file's content; a UTF-8
// byte order mark at its start is dropped, and CRLF line ends are read as
// LF.
func ParseBaseline(b []byte) Baseline {
	var out Baseline
	for line := range strings.SplitSeq(strings.TrimPrefix(string(b), "\ufeff"), "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	return out
}

// maxBaselineBytes is the largest baseline file LoadBaseline reads: 1 MiB.
const maxBaselineBytes = 1 << 20

// LoadBaseline is conformance.LoadBaseline: the baseline file at path; an unreadable file, one
// that is not a regular file (a folder, a FIFO, a device such as
// /dev/zero or /dev/null) or one over 1 MiB is an error naming
// IDEMCHECK_BASELINE, and nothing of it is read.
func LoadBaseline(path string) (Baseline, error) {
	b, err := readBaseline(path)
	if err != nil {
		return nil, fmt.Errorf("conformance: IDEMCHECK_BASELINE=%q: %w", path, err)
	}
	return ParseBaseline(b), nil
}

// readBaseline is the content of the regular file at path, at most
// maxBaselineBytes. The mode is checked before opening: opening a FIFO
// blocks until something writes to it.
func readBaseline(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	case fi.Size() > maxBaselineBytes:
		return nil, fmt.Errorf("%d bytes, over the %d a baseline may hold", fi.Size(), maxBaselineBytes)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	b, err := io.ReadAll(io.LimitReader(f, maxBaselineBytes+1))
	if err == nil && len(b) > maxBaselineBytes {
		err = fmt.Errorf("over the %d bytes a baseline may hold", maxBaselineBytes)
	}
	return b, err
}

// Knows reports whether the baseline acknowledges v: it lists v's
// category, or v's invariant by name.
func (b Baseline) Knows(v *check.ViolationError) bool {
	for _, e := range b {
		if e == v.Category || e == v.Invariant {
			return true
		}
	}
	return false
}

// knownPrefix starts the reason of a requirement the baseline turned from
// FAIL to KNOWN.
const knownPrefix = "known: listed in the baseline; "

// acknowledgedPrefix starts the reason of a requirement the baseline
// turned from INCONCLUSIVE to ACKNOWLEDGED.
const acknowledgedPrefix = "acknowledged: listed in the baseline; "

// requirement is r with the baseline applied: a FAIL whose id it lists is
// KNOWN, its reason prefixed with knownPrefix and its evidence kept; an
// INCONCLUSIVE one it lists is ACKNOWLEDGED (a limit of the check the
// team accepts), its reason prefixed with acknowledgedPrefix; any other
// verdict stays as it is.
func (b Baseline) requirement(r reports.RequirementResult) reports.RequirementResult {
	switch {
	case !slices.Contains(b, r.ID):
	case r.Verdict == reports.Fail:
		r.Verdict, r.Reason = reports.Known, knownPrefix+r.Reason
	case r.Verdict == reports.Inconclusive:
		r.Verdict, r.Reason = reports.Acknowledged, acknowledgedPrefix+r.Reason
	}
	return r
}

// invariant is r with the baseline applied: an INCONCLUSIVE invariant
// whose name it lists (one the run could not exercise, such as a
// mismatch-rejected that held vacuously because every sequence ended at
// an acknowledged deviation first) is ACKNOWLEDGED, its reason prefixed
// with acknowledgedPrefix; any other verdict stays as it is (a FAIL of a
// listed invariant comes from a deviation, which the baseline turns KNOWN).
func (b Baseline) invariant(r reports.InvariantResult) reports.InvariantResult {
	if r.Verdict == reports.Inconclusive && slices.Contains(b, r.Name) {
		r.Verdict, r.Reason = reports.Acknowledged, acknowledgedPrefix+r.Reason
	}
	return r
}

// causes applies b to c's causes (certify.Explain): a cause whose id it
// lists makes what shows it KNOWN — its FAIL requirements, its FAIL
// invariants and their FAIL deviations — each reason prefixed with
// knownPrefix and the cause named. The page's first entry is a cause, so
// a team acknowledges what it read there (issue 24: "the same run with a
// baseline listing those causes exits 0").
func (b Baseline) causes(c *reports.Certification) {
	for _, k := range c.Causes {
		if !slices.Contains(b, k.ID) {
			continue
		}
		known := knownPrefix + "cause " + k.ID + "; "
		for i := range c.Requirements {
			if r := &c.Requirements[i]; r.Verdict == reports.Fail && slices.Contains(k.Requirements, r.ID) {
				r.Verdict, r.Reason = reports.Known, known+r.Reason
			}
		}
		for i := range c.Invariants {
			if v := &c.Invariants[i]; v.Verdict == reports.Fail && slices.Contains(k.Invariants, v.Name) {
				v.Verdict, v.Reason = reports.Known, known+v.Reason
			}
		}
		for i := range c.Deviations {
			if d := &c.Deviations[i]; d.Verdict == reports.Fail && slices.Contains(k.Invariants, d.Invariant) {
				d.Verdict = reports.Known
			}
		}
	}
}

// unused are the entries of b that matched nothing in c: no requirement
// or invariant they turned KNOWN or ACKNOWLEDGED, no KNOWN deviation of
// their category or invariant.
func (b Baseline) unused(c reports.Certification) []string {
	var out []string
	for _, e := range b {
		used := false
		for _, r := range c.Requirements {
			used = used || r.ID == e && (r.Verdict == reports.Known || r.Verdict == reports.Acknowledged)
		}
		for _, d := range c.Deviations {
			used = used || d.Verdict == reports.Known && (d.Category == e || d.Invariant == e)
		}
		for _, i := range c.Invariants {
			used = used || i.Name == e && i.Verdict == reports.Acknowledged
		}
		for _, k := range c.Causes {
			used = used || k.ID == e
		}
		if !used && !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}
