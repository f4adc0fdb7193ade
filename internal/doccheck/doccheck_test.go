package doccheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// root is the repository root, two folders up from this package.
const root = "../.."

// documents are the files a newcomer follows: the README, docs/, the
// Makefile, the CI script, the action and the workflows.
func documents(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md", "Makefile", ".ci/run", "action.yml"}
	for _, pattern := range []string{"docs/*.md", ".github/workflows/*.yml"} {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		require.NoError(t, err)
		for _, f := range m {
			rel, err := filepath.Rel(root, f)
			require.NoError(t, err)
			files = append(files, rel)
		}
	}
	return files
}

// serverByGoRun is a command that serves a provider through go run.
var serverByGoRun = regexp.MustCompile(`go run \S*(refprovider|idemcheck\S*\s+serve)`)

// Regression (issue 13): the README told users to start the provider with
// `go run ./cmd/refprovider … &`; killing that (SIGTERM) kills the go
// command and leaves its compiled child serving. Servers are started as
// binaries (idemcheck serve).
func TestNoServerIsStartedWithGoRun(t *testing.T) {
	for _, f := range documents(t) {
		b, err := os.ReadFile(filepath.Join(root, f))
		require.NoError(t, err)
		for i, line := range strings.Split(string(b), "\n") {
			assert.False(t, serverByGoRun.MatchString(line), "%s:%d starts a server with go run: %s", f, i+1, line)
		}
	}
}

// mdLink is a Markdown link to a relative path, with its optional anchor.
var mdLink = regexp.MustCompile(`\]\(([^)#\s]+)(#[^)\s]*)?\)`)

// Every relative link in the README and docs/ names a file that exists.
func TestDocumentLinksResolve(t *testing.T) {
	for _, f := range documents(t) {
		if !strings.HasSuffix(f, ".md") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, f))
		require.NoError(t, err)
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			if strings.Contains(m[1], "://") {
				continue
			}
			_, err := os.Stat(filepath.Join(root, filepath.Dir(f), m[1]))
			assert.NoError(t, err, "%s links to %s", f, m[1])
		}
	}
}
