package wiremock_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/sut/wiremock"
)

// fakeClone is a folder with a package.json pinning wiremock and a package
// folder inside it, the working directory; bin is put alone on PATH.
func fakeClone(t *testing.T, npm string) (root string) {
	t.Helper()
	root = t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "package.json"), []byte(`{"devDependencies": {"wiremock": "3.13.2"}}`), 0o644))
	pkg := filepath.Join(root, "conformance")
	require.NoError(t, os.Mkdir(pkg, 0o755))
	bin := filepath.Join(root, "bin")
	require.NoError(t, os.Mkdir(bin, 0o755))
	if npm != "" {
		require.NoError(t, os.WriteFile(filepath.Join(bin, "npm"), []byte(npm), 0o755))
	}
	t.Setenv("PATH", bin)
	t.Setenv("IDEMCHECK_WIREMOCK_JAR", "")
	t.Chdir(pkg)
	return root
}

// Regression (issue 13): a WireMock test on a clone without node_modules
// failed with "run `npm ci`"; the jar was installed only by make deps,
// which every make target ran. FindJar now runs `npm ci` in the clone's
// root itself, with npm's cache inside the clone.
func TestFindJar_InstallsThePinnedJarWithNpm(t *testing.T) {
	root := fakeClone(t, `#!/bin/sh
echo "$@" > npm-args
/bin/mkdir -p node_modules/wiremock/build
echo jar > node_modules/wiremock/build/`+wiremock.JarName+"\n")
	jar, err := wiremock.FindJar()
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, "node_modules", "wiremock", "build", wiremock.JarName), jar)
	args, err := os.ReadFile(filepath.Join(root, "npm-args"))
	require.NoError(t, err, "npm ran in the root")
	assert.Equal(t, "ci --no-audit --no-fund --cache "+filepath.Join(root, ".cache", "npm"), strings.TrimSpace(string(args)))

	require.NoError(t, os.Remove(filepath.Join(root, "npm-args")))
	again, err := wiremock.FindJar()
	require.NoError(t, err)
	assert.Equal(t, jar, again)
	assert.NoFileExists(t, filepath.Join(root, "npm-args"), "an installed jar is not installed again")
}

func TestFindJar_WithoutNpmSaysWhatToInstall(t *testing.T) {
	root := fakeClone(t, "")
	_, err := wiremock.FindJar()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "npm is not on PATH")
	assert.Contains(t, err.Error(), root)
}

func TestFindJar_AFailingInstallShowsNpmsOutput(t *testing.T) {
	fakeClone(t, "#!/bin/sh\necho 'npm error network ENOTFOUND registry.npmjs.org'\nexit 1\n")
	_, err := wiremock.FindJar()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ENOTFOUND")
}
