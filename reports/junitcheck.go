package reports

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// xmlNode is a generic XML element: what ValidateJUnit walks, independent
// of the structs the encoder uses.
type xmlNode struct {
	name     string
	attrs    map[string]string
	children []*xmlNode
}

// ValidateJUnit checks that data is JUnit XML in the shape the common CI
// readers accept (the Jenkins / Ant schema GitHub and GitLab panels read):
// a <testsuites> root of <testsuite name tests failures skipped time>
// elements, each of <testcase name classname time> elements whose only
// children are <failure message>, <error message>, <skipped>,
// <system-out> or <system-err>; times are non-negative seconds, and every
// count equals what it counts. It returns the first problem found.
func ValidateJUnit(data []byte) error {
	root, err := parseXML(data)
	if err != nil {
		return err
	}
	if root.name != "testsuites" {
		return fmt.Errorf("junit: root is <%s>, want <testsuites>", root.name)
	}
	if v, ok := root.attrs["time"]; ok {
		if err := checkTime(v); err != nil {
			return fmt.Errorf("junit: <testsuites>: %w", err)
		}
	}
	var sum [3]int
	for i, s := range root.children {
		if s.name != "testsuite" {
			return fmt.Errorf("junit: <testsuites> child %d is <%s>, want <testsuite>", i, s.name)
		}
		counts, err := checkSuite(s)
		if err != nil {
			return fmt.Errorf("junit: testsuite %q: %w", s.attrs["name"], err)
		}
		for k := range sum {
			sum[k] += counts[k]
		}
	}
	for k, attr := range []string{"tests", "failures", "skipped"} {
		if v, ok := root.attrs[attr]; ok {
			if n, err := strconv.Atoi(v); err != nil || n != sum[k] {
				return fmt.Errorf("junit: <testsuites %s=%q>, its suites hold %d", attr, v, sum[k])
			}
		}
	}
	return nil
}

// checkSuite checks one testsuite and returns its tests, failures and skips.
func checkSuite(s *xmlNode) ([3]int, error) {
	var got [3]int
	for _, attr := range []string{"name", "tests", "failures", "skipped", "time"} {
		if _, ok := s.attrs[attr]; !ok {
			return got, fmt.Errorf("missing attribute %s", attr)
		}
	}
	if err := checkTime(s.attrs["time"]); err != nil {
		return got, err
	}
	for _, c := range s.children {
		switch c.name {
		case "properties", "system-out", "system-err":
			continue
		case "testcase":
		default:
			return got, fmt.Errorf("unexpected <%s>", c.name)
		}
		got[0]++
		for _, attr := range []string{"name", "classname", "time"} {
			if c.attrs[attr] == "" {
				return got, fmt.Errorf("testcase %q: missing attribute %s", c.attrs["name"], attr)
			}
		}
		if err := checkTime(c.attrs["time"]); err != nil {
			return got, fmt.Errorf("testcase %q: %w", c.attrs["name"], err)
		}
		for _, r := range c.children {
			switch r.name {
			case "failure", "error":
				if _, ok := r.attrs["message"]; !ok {
					return got, fmt.Errorf("testcase %q: <%s> without message", c.attrs["name"], r.name)
				}
				if r.name == "failure" {
					got[1]++
				}
			case "skipped":
				got[2]++
			case "system-out", "system-err":
			default:
				return got, fmt.Errorf("testcase %q: unexpected <%s>", c.attrs["name"], r.name)
			}
		}
	}
	for k, attr := range []string{"tests", "failures", "skipped"} {
		if n, err := strconv.Atoi(s.attrs[attr]); err != nil || n != got[k] {
			return got, fmt.Errorf("%s=%q, but it holds %d", attr, s.attrs[attr], got[k])
		}
	}
	return got, nil
}

// checkTime checks a JUnit time: non-negative seconds.
func checkTime(v string) error {
	if f, err := strconv.ParseFloat(v, 64); err != nil || f < 0 {
		return fmt.Errorf("time=%q is not a non-negative number of seconds", v)
	}
	return nil
}

// parseXML reads data into a tree of elements; text is dropped.
func parseXML(data []byte) (*xmlNode, error) {
	dec := xml.NewDecoder(bytes.NewReader(data))
	var stack []*xmlNode
	var root *xmlNode
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("junit: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			n := &xmlNode{name: t.Name.Local, attrs: map[string]string{}}
			for _, a := range t.Attr {
				n.attrs[a.Name.Local] = a.Value
			}
			if len(stack) > 0 {
				top := stack[len(stack)-1]
				top.children = append(top.children, n)
			} else if root != nil {
				return nil, errors.New("junit: more than one root element")
			} else {
				root = n
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
	}
	if root == nil {
		return nil, errors.New("junit: no root element")
	}
	return root, nil
}
