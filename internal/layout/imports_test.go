// Package layout holds the test that keeps the module's imports pointing
// one way (docs/architecture.md): the public entry (conformance) over the
// run around the property (conformance/internal/run), over the state
// machine (conformance/internal/machine), over the invariants
// (conformance/check) and the systems under test and their adapters
// (sut/...), over the fault layer, the reports and the domain types.
package layout_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/idemcheck/idemcheck"

// groups maps a package folder (relative to the module root) to its layer:
// the longest prefix listed wins.
var groups = map[string]string{
	"conformance":                  "entry",
	"conformance/internal/run":     "run",
	"conformance/internal/machine": "machine",
	"conformance/check":            "check",
	"certify":                      "certify",
	"sut":                          "sut",
	"checkout":                     "checkout",
	"faults":                       "faults",
	"reports":                      "reports",
	"models":                       "models",
	"cmd":                          "tools",
	"internal":                     "tools",
	"internal/stackgrow":           "leaf",
	"internal/jsonread":            "leaf",
	"examples":                     "tools",
}

// allowed lists, per layer, the layers its files may import: every arrow
// points down; within "sut" one system may build on another (a mutant on
// the provider, an adapter on the system it adapts). The tools (cmd/,
// internal/, examples/) stand on top and may use anything public. A leaf
// (internal/stackgrow: the runtime's stack; internal/jsonread: reading
// JSON; no domain in either) sits under all.
var allowed = map[string][]string{
	"entry":    {"run", "machine", "check", "certify", "sut", "checkout", "faults", "reports", "models", "leaf"},
	"run":      {"machine", "check", "certify", "sut", "checkout", "faults", "reports", "models", "leaf"},
	"machine":  {"check", "sut", "checkout", "faults", "reports", "models", "leaf"},
	"check":    {"faults", "models", "leaf"},
	"certify":  {"sut", "faults", "reports", "models", "leaf"},
	"sut":      {"sut", "checkout", "faults", "reports", "models", "leaf"},
	"checkout": {"models", "leaf"},
	"faults":   {"models", "leaf"},
	"reports":  {"models", "leaf"},
	"models":   {"leaf"},
	"tools":    {"tools", "entry", "check", "certify", "sut", "checkout", "faults", "reports", "models", "leaf"},
	"leaf":     {},
}

// groupOf is the layer of the package folder dir, "" when none is listed.
func groupOf(dir string) string {
	best, group := "", ""
	for prefix, g := range groups {
		if (dir == prefix || strings.HasPrefix(dir, prefix+"/")) && len(prefix) > len(best) {
			best, group = prefix, g
		}
	}
	return group
}

// edge is one import of a module package by a file.
type edge struct{ file, from, to string }

// moduleImports lists the imports of module packages by every .go file
// under root but node_modules, testdata, hidden folders and examples/usage
// (a module of its own), and but tests in an external _test package: those
// use the module as its users do, and may take a system from above as a
// fixture (a provider to fault, a hostile server). A test in its
// package's own name is in its package's layer.
func moduleImports(t *testing.T, root string) []edge {
	t.Helper()
	var out []edge
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata" || rel == "examples/usage") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		if strings.HasSuffix(path, "_test.go") && strings.HasSuffix(f.Name.Name, "_test") {
			return nil
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p == module || strings.HasPrefix(p, module+"/") {
				out = append(out, edge{file: rel, from: filepath.ToSlash(filepath.Dir(rel)), to: strings.TrimPrefix(strings.TrimPrefix(p, module), "/")})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// against lists the edges that run against the layers: "file imports
// package (layer a → layer b)".
func against(edges []edge) []string {
	var bad []string
	for _, e := range edges {
		from, to := groupOf(e.from), groupOf(e.to)
		switch {
		case e.from == e.to: // an external test of its own package
		case from == "" || to == "":
			bad = append(bad, e.file+" imports "+e.to+" (a folder docs/architecture.md does not place: add it to groups)")
		case !slices.Contains(allowed[from], to):
			bad = append(bad, e.file+" imports "+e.to+" ("+from+" → "+to+", against the direction)")
		}
	}
	return bad
}

// moduleRoot is the folder of go.mod above the test's folder.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		if filepath.Dir(dir) == dir {
			t.Fatal("no go.mod above the test's folder")
		}
		dir = filepath.Dir(dir)
	}
}

// Every import of a module package points down the layers of
// docs/architecture.md.
func TestImportsPointDown(t *testing.T) {
	edges := moduleImports(t, moduleRoot(t))
	if len(edges) < 100 {
		t.Fatalf("found %d imports of module packages; the walk missed the tree", len(edges))
	}
	for _, b := range against(edges) {
		t.Error(b)
	}
}

// The check itself sees an arrow against the direction: the machine
// importing the run around it, a system under test importing the
// invariants, the domain types importing anything.
func TestAnEdgeAgainstTheDirectionIsCaught(t *testing.T) {
	for _, e := range []edge{
		{"conformance/internal/machine/x.go", "conformance/internal/machine", "conformance/internal/run"},
		{"sut/backend/x.go", "sut/backend", "conformance/check"},
		{"models/x.go", "models", "faults"},
		{"conformance/check/x.go", "conformance/check", "conformance"},
	} {
		if got := against([]edge{e}); len(got) != 1 {
			t.Errorf("%s importing %s was not caught", e.file, e.to)
		}
	}
	if got := against([]edge{{"conformance/x.go", "conformance", "conformance/internal/run"}}); len(got) != 0 {
		t.Errorf("a downward edge was refused: %v", got)
	}
}
