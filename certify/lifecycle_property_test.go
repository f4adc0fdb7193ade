package certify_test

import (
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/conformance"
	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/sut/remote"
)

// TestLifecyclePropertyReferencePasses: the property against refprovider
// -store redis on its own redis-server, with the three hooks, draws
// provider-restart and store-outage faults (restarting the provider and
// stopping and starting its store for real), at most the run's bound of
// each, and the reference passes every invariant through them. Seed 4:
// since issue 28's draws, seed 1's 10 sequences draw no restart.
func TestLifecyclePropertyReferencePasses(t *testing.T) {
	r := startRedis(t)
	p := startProvider(t, r, "-processing", "500ms", "-lease", "2s")
	hooks := remote.Hooks{Restart: p.restart, StoreDown: r.down, StoreUp: r.up}
	stats, prov := lifecycleProperty(t, p.url, hooks, "10", "4")
	restarts, outages := stats.Injected(faults.KindProviderRestart), stats.Injected(faults.KindStoreOutage)
	t.Logf("%d sequences; %d restarts, %d store outages; %s", stats.Sequences(), restarts, outages, stats.Summary())
	assert.Positive(t, restarts)
	assert.Positive(t, outages)
	assert.LessOrEqual(t, restarts, remote.MaxRestartFaults)
	assert.LessOrEqual(t, outages, remote.MaxOutageFaults)
	runs := map[string]int{}
	for _, h := range prov.HookFaultRuns() {
		assert.Empty(t, h.Error, "%s", h.Name)
		assert.Equal(t, remote.HookFaultFor, h.For)
		runs[h.Name]++
	}
	// A restart drawn 300 ms into a request whose client gave up first is
	// counted and never run (faults/provider_restart.go): at most as many
	// restart hook runs as restarts counted, and at least one.
	assert.Positive(t, runs["restart"])
	assert.LessOrEqual(t, runs["restart"], restarts)
	assert.Equal(t, map[string]int{"store_down": outages, "store_up": outages}, map[string]int{"store_down": runs["store_down"], "store_up": runs["store_up"]})
}

// lifecycleProperty runs the property (checks sequences from seed)
// against url with hooks and the lifecycle profile (lease 2 s), its
// report in a folder of the test's own; it returns the run's statistics
// and the provider, whose hook runs it kept.
func lifecycleProperty(t *testing.T, url string, hooks remote.Hooks, checks, seed string) (*conformance.Stats, *remote.Provider) {
	t.Helper()
	prov, err := remote.New(remote.Config{BaseURL: url, APIKey: testKey, Profile: lifecycleProfile(2 * time.Second), Hooks: hooks, Limits: remote.Limits{MaxDuration: runBound}})
	require.NoError(t, err)
	for name, v := range map[string]string{"rapid.checks": checks, "rapid.seed": seed} {
		f := flag.Lookup(name)
		require.NotNil(t, f, name)
		old := f.Value.String()
		require.NoError(t, f.Value.Set(v))
		t.Cleanup(func() { _ = f.Value.Set(old) })
	}
	reports := t.TempDir()
	t.Cleanup(func() { logReportsOnFailure(t, reports) })
	stats := conformance.Run(t, conformance.Config{Provider: url, Remote: prov, ReportDir: reports})
	return stats, prov
}

// logReportsOnFailure logs the Markdown reports under dir (the catalogue
// and each deviation's history, at most 64 KiB in all) when t failed: a
// run in real time on a loaded runner may not fail again, and its folder
// is gone with the test.
func logReportsOnFailure(t *testing.T, dir string) {
	if !t.Failed() {
		return
	}
	left := 64 << 10
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") || left <= 0 {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		b = b[:min(len(b), left)]
		left -= len(b)
		t.Logf("%s:\n%s", path, b)
		return nil
	})
}
