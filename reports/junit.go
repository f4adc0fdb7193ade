package reports

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strings"
	"time"
)

// JUnitSuites is the root of a JUnit XML report in the shape CI test panels
// read (GitHub, GitLab, Jenkins): testsuites / testsuite / testcase, with a
// testcase failed by a <failure> child and skipped by a <skipped> one.
// Times are in seconds.
type JUnitSuites struct {
	XMLName xml.Name `xml:"testsuites"`
	JUnitCounts
	Suites []JUnitSuite `xml:"testsuite"`
}

// JUnitCounts are the attributes a testsuites and a testsuite share: a
// name, the counts of what they hold, and a time in seconds.
type JUnitCounts struct {
	Name     string `xml:"name,attr"`
	Tests    int    `xml:"tests,attr"`
	Failures int    `xml:"failures,attr"`
	Errors   int    `xml:"errors,attr"`
	Skipped  int    `xml:"skipped,attr"`
	Time     string `xml:"time,attr"`
}

// JUnitSuite is one testsuite; its counts are those of its cases.
type JUnitSuite struct {
	JUnitCounts
	Timestamp string      `xml:"timestamp,attr,omitempty"`
	Cases     []JUnitCase `xml:"testcase"`
}

// JUnitCase is one testcase: passed, failed (Failure) or skipped (Skipped).
type JUnitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *JUnitMessage `xml:"failure,omitempty"`
	Skipped   *JUnitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

// JUnitMessage is a failure or skip: a one-line message, a type, and
// free text.
type JUnitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// junitSuite builds a suite of cases, counting failures and skips, taking
// d as its time.
func junitSuite(name string, started time.Time, d time.Duration, cases []JUnitCase) JUnitSuite {
	s := JUnitSuite{JUnitCounts: JUnitCounts{Name: name, Tests: len(cases), Time: seconds(d)}, Cases: cases}
	if !started.IsZero() {
		s.Timestamp = started.UTC().Format("2006-01-02T15:04:05")
	}
	for _, c := range cases {
		switch {
		case c.Failure != nil:
			s.Failures++
		case c.Skipped != nil:
			s.Skipped++
		}
	}
	return s
}

// encodeJUnit renders suites under one testsuites root, with the XML header.
func encodeJUnit(name string, d time.Duration, suites ...JUnitSuite) ([]byte, error) {
	root := JUnitSuites{JUnitCounts: JUnitCounts{Name: name, Time: seconds(d)}, Suites: suites}
	for _, s := range suites {
		root.Tests += s.Tests
		root.Failures += s.Failures
		root.Errors += s.Errors
		root.Skipped += s.Skipped
	}
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	enc := xml.NewEncoder(&buf)
	enc.Indent("", "  ")
	if err := enc.Encode(root); err != nil {
		return nil, fmt.Errorf("reports: encoding JUnit XML: %w", err)
	}
	buf.WriteString("\n")
	return buf.Bytes(), nil
}

// seconds is d as JUnit writes a time: seconds with 3 decimals.
func seconds(d time.Duration) string {
	return fmt.Sprintf("%.3f", max(d, 0).Seconds())
}

// FailureJUnit renders a failing property run as JUnit XML: one testsuite
// named after f.Test with one testcase per invariant in invariants (class
// "idemcheck.invariants"); the violated one fails with f's message, its
// explanation and the replay command, the others pass (they held in every
// evaluation until the run stopped at the first violation). An invariant
// of f missing from invariants is added, so the failure is never lost.
func FailureJUnit(f Failure, invariants []string) ([]byte, error) {
	names := append([]string(nil), invariants...)
	found := false
	for _, n := range names {
		found = found || n == f.Invariant
	}
	if !found {
		names = append(names, f.Invariant)
	}
	var cases []JUnitCase
	for _, n := range names {
		c := JUnitCase{Name: n, Classname: "idemcheck.invariants", Time: seconds(0)}
		if n == f.Invariant {
			text := strings.TrimSpace(strings.Join([]string{f.Explanation, f.Message, "replay: " + f.Replay}, "\n"))
			if f.Reproducibility != nil {
				text += "\nreproducibility: " + f.Reproducibility.String()
			}
			c.Failure = &JUnitMessage{Message: firstLine(f.Message), Type: "invariant-violated", Text: text}
		}
		cases = append(cases, c)
	}
	name := f.Test
	if name == "" {
		name = "idemcheck"
	}
	return encodeJUnit("idemcheck", 0, junitSuite(name, time.Time{}, 0, cases))
}

// firstLine is s up to its first line break.
func firstLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return s[:i]
	}
	return s
}
