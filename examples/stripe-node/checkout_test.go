// Package stripenode certifies server.js, a checkout service in Node on
// Stripe's SDK (the stripe npm package, pinned in package.json), with
// conformance.CheckService over docs/client-api.md, the embedded
// provider speaking Stripe's API (conformance.WithDialect("stripe")).
// The Go here is the test only: npm ci in this folder installs the SDK
// (TestMain runs it when node_modules/ lacks it).
package stripenode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/conformance"
	"github.com/idemcheck/idemcheck/internal/childfail"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/sut/service"
)

// childVar runs TestNaiveIsCaught's child: the naive variant, each
// sequence its own node process (service.Command, the contract as any
// service meets it).
const childVar = "STRIPE_NODE_CHILD"

// scriptVar hands the child server.js's absolute path (it runs in a
// temporary folder).
const scriptVar = "STRIPE_NODE_SCRIPT"

// script is server.js, absolute.
var script string

// pool is the control URL of the node process TestMain starts with
// --pool, whose fresh instances TestCorrectPasses certifies.
var pool string

// settings are server.js's timings scaled as docs/client-api.md asks
// (the run is real time scaled by 1/15), and its key.
var settings = map[string]string{
	"ATTEMPT_TIMEOUT_MS": "200", "TOTAL_TIMEOUT_MS": "667", "RETRY_DELAY_MS": "67",
	"STRIPE_SECRET_KEY": "sk_test_bookstore_node",
}

func TestMain(m *testing.M) {
	flag.Parse()
	// A sequence takes ~0.5-1 s in real time here: 100 per shard of
	// TestCorrectPasses unless RAPID_CHECKS or -rapid.checks says otherwise
	// (400 in all keeps the test command near 10 min on 2 cores;
	// RAPID_CHECKS=250 gives the 1000 of docs/checkout.md).
	explicit := os.Getenv("RAPID_CHECKS") != ""
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "rapid.checks" })
	if !explicit {
		_ = flag.Set("rapid.checks", "100")
	}
	for k, v := range settings {
		_ = os.Setenv(k, v)
	}
	if script = os.Getenv(scriptVar); script == "" {
		script, _ = filepath.Abs("server.js")
	}
	if os.Getenv(childVar) != "" {
		os.Exit(m.Run())
	}
	if err := npmCI(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	stop, err := startPool()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	stop()
	os.Exit(code)
}

// npmCI installs the pinned SDK when node_modules/ lacks it.
func npmCI() error {
	if _, err := os.Stat(filepath.Join("node_modules", "stripe", "package.json")); err == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund").CombinedOutput()
	if err != nil {
		return fmt.Errorf("npm ci in examples/stripe-node: %v\n%s", err, out)
	}
	return nil
}

// startPool starts server.js --pool (the correct variant) and reads its
// control URL; it returns what kills it.
func startPool() (func(), error) {
	cmd := exec.Command("node", script, "--variant", "correct", "--pool")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start node: %w", err)
	}
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(io.LimitReader(out, 64<<10))
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "pool listening on "); ok {
				found <- u
				break
			}
		}
		close(found)
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case u, ok := <-found:
		if ok {
			pool = u
			return stop, nil
		}
	case <-time.After(30 * time.Second):
	}
	stop()
	return nil, errors.New("server.js --pool printed no \"pool listening on\" line within 30 s")
}

// poolClient bounds every call to the pool's control port.
var poolClient = &http.Client{Timeout: 10 * time.Second}

// fromPool is the service.Launcher of TestCorrectPasses: a fresh instance
// of server.js (no orders, no attempts) from the pool, paying through
// providerURL. It saves a node start per sequence (~0.3 s of CPU, 2 s of
// wall time on a loaded 2-core machine); an instance is the very code a
// standalone server.js runs.
func fromPool(ctx context.Context, providerURL string) (string, func(), error) {
	in, _ := json.Marshal(map[string]string{"provider_url": providerURL})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, pool+"/instances", bytes.NewReader(in))
	if err != nil {
		return "", nil, err
	}
	resp, err := poolClient.Do(req)
	if err != nil {
		return "", nil, err
	}
	defer resp.Body.Close()
	var got struct {
		BaseURL string `json:"base_url"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<10)).Decode(&got); err != nil || resp.StatusCode != http.StatusCreated {
		return "", nil, fmt.Errorf("the pool answered %s (%v)", resp.Status, err)
	}
	port := got.BaseURL[strings.LastIndex(got.BaseURL, ":")+1:]
	stop := func() {
		req, err := http.NewRequest(http.MethodDelete, pool+"/instances/"+port, nil)
		if err != nil {
			return
		}
		if resp, err := poolClient.Do(req); err == nil {
			_ = resp.Body.Close()
		}
	}
	return got.BaseURL, stop, nil
}

// shards is how many runs TestCorrectPasses makes at once, each its own
// CheckService over a share of the seeds (conformance.Shard): a sequence
// here mostly waits (on loopback HTTP, node and the fault schedule's
// delays: 5 s of CPU for 26 s of wall time over 40 of them), so four at
// once take about as long as one.
const shards = 4

// TestCorrectPasses certifies the correct variant: every invariant the
// stripe dialect judges holds over shards runs of -rapid.checks
// sequences each (100 unless set: 400 in all). The provider-only
// invariants are NOT JUDGED in the stripe dialect (they would judge the
// harness's own translation). A run its duration budget stopped early is
// INCONCLUSIVE (its subtest skipped), and then too few sequences fail the
// test.
func TestCorrectPasses(t *testing.T) {
	var checks int
	_, err := fmt.Sscan(flag.Lookup("rapid.checks").Value.String(), &checks)
	require.NoError(t, err)
	cfg, err := conformance.FromEnv()
	require.NoError(t, err)
	all := make([]*conformance.Stats, shards)
	t.Run("shards", func(t *testing.T) {
		for i := range shards {
			t.Run(fmt.Sprintf("%d-of-%d", i, shards), func(t *testing.T) {
				t.Parallel()
				c := cfg
				c.Shard = conformance.Shard{Index: i, Count: shards}
				c.OnStart = func(s *conformance.Stats) { all[i] = s }
				conformance.CheckService(t, fromPool, conformance.WithConfig(c), conformance.WithDialect("stripe"),
					conformance.WithService(conformance.ServiceOptions{MaxDuration: 15 * time.Minute}))
			})
		}
	})
	total := 0
	for i, stats := range all {
		require.NotNil(t, stats, "shard %d did not start", i)
		total += stats.Sequences()
		for _, r := range stats.Results() {
			assert.NotEqual(t, reports.Fail, r.Verdict, "shard %d: %s: %s", i, r.Name, r.Reason)
		}
	}
	t.Logf("the correct variant passed %d sequences in %d runs", total, shards)
	assert.GreaterOrEqual(t, total, shards*checks)
}

// TestNaiveIsCaught runs the naive variant — the SDK's key per call, one
// call per click, an error read as final — in a child process, each
// sequence its own node process (service.Command, the contract as any
// service meets it), and asserts that it fails on the invariant a double
// click or a lost answer breaks, with a report whose counterexample has
// at most 3 shopper steps (rapid shrinks it for up to 20 s of real time).
func TestNaiveIsCaught(t *testing.T) {
	if os.Getenv(childVar) != "" {
		conformance.CheckService(t, service.Command("node", script, "--variant", "naive"), conformance.WithDialect("stripe"))
		return
	}
	rep, out := childfail.Run(t, "TestNaiveIsCaught", []string{"-test.v", "-rapid.seed=3"},
		childVar+"=1", scriptVar+"="+script, "RAPID_CHECKS=100", "RAPID_SHRINKTIME=20s")
	t.Logf("naive: %s after %d shopper steps", rep.Invariant, rep.StepCount)
	assert.Contains(t, []string{conformance.AtMostOneChargePerOrder, conformance.ConflictNeverFinal, conformance.OneKeyPerIntent}, rep.Invariant, "output:\n%s", out)
	assert.Contains(t, out, rep.Invariant+" violated", "the failure names the invariant")
	// In real time a shrink attempt may not fail again on a loaded machine
	// (rapid then stops with "flaky test"); the bound holds for a shrink
	// rapid finished.
	if !strings.Contains(out, "[rapid] flaky test") {
		assert.LessOrEqual(t, rep.StepCount, 3, "a minimal counterexample; output:\n%s", out)
	}
}
