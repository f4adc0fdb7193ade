package conformance_test

import (
	"bufio"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/conformance/check"
	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/reports"
)

// TestFailingMutantRunArtefacts: one failing run of the main job against a
// provider mutant (a completed key charges again instead of replaying),
// with the reproducibility check on, a CI job summary and a secret in the
// environment, writes every artefact a reader needs, and its curl script
// reproduces the double charge against refprovider serving the same
// mutant (and not against the reference provider).
func TestFailingMutantRunArtefacts(t *testing.T) {
	t.Parallel() // it mostly waits (real time, a build): beside another such test
	const mutant, secret = "replay-new-charge", "sk_test_idemcheck-must-not-print-this"
	go func() { _, _ = refproviderBin() }() // built while the child runs
	summary := filepath.Join(t.TempDir(), "step-summary.md")
	out, failed, dir := runConformance(t, "1", "IDEMCHECK_MUTANT="+mutant, "IDEMCHECK_REPRODUCE=10",
		"GITHUB_STEP_SUMMARY="+summary, "IDEMCHECK_API_KEY="+secret)
	require.True(t, failed, "the mutant must fail the main job; output:\n%s", out)
	read := func(name string) string {
		t.Helper()
		b, err := os.ReadFile(reportFile(dir, mutant, name))
		require.NoError(t, err, "output:\n%s", out)
		return string(b)
	}
	md, js, curl, junit := read("failure.md"), read("failure.json"), read("failure.curl.sh"), read("failure.junit.xml")

	t.Run("the Markdown report", func(t *testing.T) {
		assert.True(t, strings.HasPrefix(md, "# idemcheck: replay-consistent violated\n\n**In plain words:** The provider did not answer a retry with its first response"), md)
		assert.Contains(t, md, "the provider now holds two successful charges for order 1.")
		assert.Contains(t, md, "```mermaid\nsequenceDiagram\n")
		assert.Regexp(t, "· seed `[1-9][0-9]*`", md) // the seed of the property that found it (the JSON report's)
		assert.Contains(t, md, "```sh\nIDEMCHECK_MUTANT="+mutant+" go test ./conformance -run '^TestConformance$/^"+mutant+"$' -rapid.failfile=testdata/rapid/")
		assert.Contains(t, md, "| # | key | provider | client saw | charge | step | time | request | body | fault | Idempotent-Replayed |\n")
		assert.Contains(t, md, "Reproducibility: **reproduced 10/10**.")
	})

	t.Run("the printed lines name files that exist", func(t *testing.T) {
		for _, label := range []string{"report: ", "json:   ", "curl:   ", "junit:  ", "index:  "} {
			i := strings.LastIndex(out, label)
			require.GreaterOrEqual(t, i, 0, "no %q line:\n%s", label, out)
			path, _, _ := strings.Cut(out[i+len(label):], "\n")
			assert.FileExists(t, strings.TrimSpace(path))
		}
		i := strings.LastIndex(out, "replay: ")
		require.GreaterOrEqual(t, i, 0)
		_, ff, ok := strings.Cut(out[i:], "-rapid.failfile=")
		require.True(t, ok)
		ff, _, _ = strings.Cut(ff, " ")
		assert.FileExists(t, filepath.Join(filepath.Dir(dir), ff), "the fail file is kept, so the next run replays it first")
	})

	t.Run("the JSON report", func(t *testing.T) {
		var rep struct {
			Invariant       string                   `json:"invariant"`
			Explanation     string                   `json:"explanation"`
			Seed            uint64                   `json:"seed"`
			Reproducibility *reports.Reproducibility `json:"reproducibility"`
		}
		require.NoError(t, json.Unmarshal([]byte(js), &rep))
		assert.Equal(t, "replay-consistent", rep.Invariant)
		assert.NotEmpty(t, rep.Explanation)
		// -rapid.seed=1 is the base: the run's properties start at seeds
		// derived from it, and the report names the one that found the
		// failure first (seed 7 on a loaded CI runner since issue 28's
		// draws), the same in the Markdown report.
		assert.NotZero(t, rep.Seed)
		assert.Contains(t, md, fmt.Sprintf("· seed `%d`", rep.Seed))
		assert.Equal(t, &reports.Reproducibility{Runs: 10, Reproduced: 10}, rep.Reproducibility)
	})

	t.Run("the JUnit XML", func(t *testing.T) {
		require.NoError(t, reports.ValidateJUnit([]byte(junit)), junit)
		var doc struct {
			Suites []struct {
				Cases []struct {
					Name    string    `xml:"name,attr"`
					Failure *struct{} `xml:"failure"`
				} `xml:"testcase"`
			} `xml:"testsuite"`
		}
		require.NoError(t, xml.Unmarshal([]byte(junit), &doc))
		require.Len(t, doc.Suites, 1)
		var names, failing []string
		for _, c := range doc.Suites[0].Cases {
			names = append(names, c.Name)
			if c.Failure != nil {
				failing = append(failing, c.Name)
			}
		}
		var all []string
		for _, inv := range append(check.Safety(), check.Liveness()...) {
			all = append(all, inv.Name)
		}
		assert.Equal(t, all, names, "one testcase per invariant")
		assert.Equal(t, []string{"replay-consistent"}, failing)
	})

	t.Run("the index and the job summary", func(t *testing.T) {
		index, err := os.ReadFile(filepath.Join(dir, reports.IndexFile))
		require.NoError(t, err)
		rel, err := filepath.Rel(dir, reportFile(dir, mutant, "failure.md"))
		require.NoError(t, err)
		assert.Contains(t, string(index), "| [TestConformance/"+mutant+"]("+filepath.ToSlash(rel)+") | failure | **FAIL** | replay-consistent: order 1 intent 1:")
		sum, err := os.ReadFile(summary)
		require.NoError(t, err)
		assert.Contains(t, string(sum), "### idemcheck: replay-consistent violated\n")
		assert.Contains(t, string(sum), "**reproduced 10/10**")
		assert.Equal(t, 1, strings.Count(string(sum), "### idemcheck:"), "the replays add nothing to the job summary")
	})

	t.Run("no secret anywhere", func(t *testing.T) {
		files := []string{summary}
		require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files = append(files, p)
			}
			return err
		}))
		require.Greater(t, len(files), 5)
		for _, p := range files {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			assert.NotContains(t, string(b), secret, p)
		}
		assert.Contains(t, curl, "${IDEMCHECK_API_KEY}")
	})

	t.Run("the curl script reproduces the double charge against refprovider", func(t *testing.T) {
		refs := postedReferences(t, js)
		require.NotEmpty(t, refs)
		bin := buildRefprovider(t)

		mutantURL := startRefprovider(t, bin, mutant)
		scriptOut := runCurlScript(t, reportFile(dir, mutant, "failure.curl.sh"), mutantURL, secret)
		assert.Contains(t, scriptOut, "HTTP/1.1 201 Created")
		// Sent one after another, the request that met a 409 in the run
		// charges too: more than one charge for one order is the violation.
		assert.GreaterOrEqual(t, maxCharges(t, mutantURL, secret, refs), 2, "the mutant holds two charges for one order; script output:\n%s", scriptOut)

		referenceURL := startRefprovider(t, bin, "")
		scriptOut = runCurlScript(t, reportFile(dir, mutant, "failure.curl.sh"), referenceURL, secret)
		assert.Equal(t, 1, maxCharges(t, referenceURL, secret, refs), "the reference provider replays instead; script output:\n%s", scriptOut)
	})
}

// TestCurlScriptReproducesARace: the curl script of a failure that needs
// concurrency — two retries of one key at the provider at once, under a
// provider without an in-flight lock — sends the overlapping requests
// together, and so reproduces the double charge against refprovider
// serving the same mutant (each request held 2 s, so the two curls need
// not start within the mutant's usual 50 ms). Regression: the script sent
// them one after the other and the second was replayed.
func TestCurlScriptReproducesARace(t *testing.T) {
	t.Parallel() // it mostly waits (real time, a build): beside another such test
	const mutant = "no-inflight-lock"
	out, failed, dir := runConformance(t, "1", "IDEMCHECK_MUTANT="+mutant)
	require.True(t, failed, out)
	js, err := os.ReadFile(reportFile(dir, mutant, "failure.json"))
	require.NoError(t, err, out)
	refs := postedReferences(t, string(js))
	require.NotEmpty(t, refs)
	url := startRefprovider(t, buildRefprovider(t), mutant, "-processing", "2s")
	scriptOut := runCurlScript(t, reportFile(dir, mutant, "failure.curl.sh"), url, "")
	assert.GreaterOrEqual(t, maxCharges(t, url, "", refs), 2, "the race charges twice; script output:\n%s", scriptOut)
}

// postedReferences lists the merchant references of the POSTs in a JSON
// failure report.
func postedReferences(t *testing.T, js string) []string {
	var rep struct {
		History models.Snapshot `json:"history"`
	}
	require.NoError(t, json.Unmarshal([]byte(js), &rep))
	seen := map[string]bool{}
	var refs []string
	for _, ex := range rep.History.Exchanges {
		if ex.IsPost() && ex.MerchantReference != "" && !seen[ex.MerchantReference] {
			seen[ex.MerchantReference] = true
			refs = append(refs, ex.MerchantReference)
		}
	}
	return refs
}

// buildRefprovider returns cmd/refprovider built into a scratch folder:
// built once per test binary (refproviderBin), since a build of it is a
// link (and, on a fresh cache, a compile of every package without -race)
// that each test needing it paid again.
func buildRefprovider(t *testing.T) string {
	t.Helper()
	bin, err := refproviderBin()
	require.NoError(t, err)
	return bin
}

// refproviderDir holds the refprovider binary; TestMain removes it
// (removeRefprovider).
var refproviderDir struct {
	sync.Mutex
	path string
}

func removeRefprovider() {
	refproviderDir.Lock()
	defer refproviderDir.Unlock()
	if refproviderDir.path != "" {
		_ = os.RemoveAll(refproviderDir.path)
	}
}

// refproviderBin builds cmd/refprovider once, bounded to five minutes.
var refproviderBin = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "idemcheck-refprovider-")
	if err != nil {
		return "", err
	}
	refproviderDir.Lock()
	refproviderDir.path = dir
	refproviderDir.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin := filepath.Join(dir, "refprovider")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "../cmd/refprovider").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ../cmd/refprovider: %v\n%s", err, out)
	}
	return bin, nil
})

// startRefprovider runs refprovider on a free loopback port serving mutant
// ("" for the reference), with flags added, and returns its URL; the
// process is stopped when the test ends.
func startRefprovider(t *testing.T, bin, mutant string, flags ...string) string {
	t.Helper()
	args := append([]string{"-addr", "127.0.0.1:0"}, flags...)
	if mutant != "" {
		args = append(args, "-mutant", mutant)
	}
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	line := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stdout)
		for {
			s, err := r.ReadString('\n')
			if err != nil || strings.HasPrefix(s, "listening on ") {
				line <- s
				_, _ = io.Copy(io.Discard, r) // keep the pipe drained
				return
			}
		}
	}()
	select {
	case s := <-line:
		base := strings.TrimSpace(strings.TrimPrefix(s, "listening on "))
		require.True(t, strings.HasPrefix(base, "http://127.0.0.1:"), "refprovider said %q", s)
		return base
	case <-time.After(30 * time.Second):
		t.Fatal("refprovider printed no listening line within 30s")
		return ""
	}
}

// runCurlScript runs a failure's curl script with bash against base,
// bounded to two minutes, and returns its output.
func runCurlScript(t *testing.T, script, base, apiKey string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Env = append(os.Environ(), "IDEMCHECK_PROVIDER_URL="+base, "IDEMCHECK_API_KEY="+apiKey)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return string(out)
}

// maxCharges is the largest number of succeeded charges the provider at
// base holds for one of refs, asked as apiKey's account (anonymous when
// empty): refprovider lists each account's charges only.
func maxCharges(t *testing.T, base, apiKey string, refs []string) int {
	t.Helper()
	most := 0
	for _, ref := range refs {
		req, err := http.NewRequest(http.MethodGet, base+"/v1/charges?merchant_reference="+url.QueryEscape(ref), nil)
		require.NoError(t, err)
		if apiKey != "" {
			req.Header.Set("Authorization", "Bearer "+apiKey) // the script's account: refprovider lists per account
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var list models.ChargeList
		err = json.NewDecoder(resp.Body).Decode(&list)
		_ = resp.Body.Close()
		require.NoError(t, err)
		n := 0
		for _, c := range list.Data {
			if c.Status == "succeeded" {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}
