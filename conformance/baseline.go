package conformance

import (
	"fmt"
	"os"
	"strings"
)

// Baseline is a list of acknowledged deviations: a deviation it lists is
// reported KNOWN instead of FAIL (found again, with its counterexample,
// but not failing the run), so a team can gate CI on new deviations only.
// IDEMCHECK_BASELINE names its file.
//
// The file holds one entry a line; blank lines and lines starting with '#'
// are ignored, and so are spaces around an entry. An entry is either a
// category exactly as a report shows it ("Category (what a baseline
// lists)", the "category" field of failure.json and certification.json:
// the violation's sentence with its particulars as "…"), which
// acknowledges that kind of violation, or an invariant name alone
// ("mismatch-rejected"), which acknowledges every violation of it:
//
//	# known deviations of our sandbox (ticket PAY-123)
//	mismatch-rejected
//	replay-consistent: …: one key and body were answered …, then …: a completed key answers its first response
type Baseline []string

// ParseBaseline reads a baseline file's content (see Baseline).
func ParseBaseline(b []byte) Baseline {
	var out Baseline
	for line := range strings.SplitSeq(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	return out
}

// LoadBaseline reads the baseline file at path; an unreadable file is an
// error naming IDEMCHECK_BASELINE.
func LoadBaseline(path string) (Baseline, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("conformance: IDEMCHECK_BASELINE=%q: %w", path, err)
	}
	return ParseBaseline(b), nil
}

// Knows reports whether the baseline acknowledges v: it lists v's
// category, or v's invariant by name.
func (b Baseline) Knows(v *ViolationError) bool {
	for _, e := range b {
		if e == v.Category || e == v.Invariant {
			return true
		}
	}
	return false
}
