package reports_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idemcheck/idemcheck/reports"
)

// TestMergeOfHostileFolders: what a merge is given cannot make it write
// outside its output folder, copy the output into itself, read without a
// bound or block, count a run twice, or leave half an output behind.
// Regressions (breaker): "../x/.." as a part wrote run.json beside the
// output; "merge -o out ." built out/out/out/…; a stats.json linked to
// /dev/zero grew to 2.4 GB, a FIFO hung; a folder given twice, or a
// merged folder beside its own part, counted twice; a truncated
// stats.json was dropped silently; a bad part left the others copied.
func TestMergeOfHostileFolders(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	root := t.TempDir()
	a, b := filepath.Join(root, "runs", "a"), filepath.Join(root, "runs", "b")
	writePart(t, a, at, reports.Pass)
	writePart(t, b, at.Add(time.Second), reports.Pass)
	work := filepath.Join(root, "work")
	require.NoError(t, os.MkdirAll(filepath.Join(work, "sub"), 0o755))
	t.Chdir(work)

	// "../runs/a/sub/.." names the folder a, never "..".
	require.NoError(t, os.MkdirAll(filepath.Join(a, "sub"), 0o755))
	m, err := reports.MergeRuns("out", []string{"../runs/a/sub/.."}, at.Add(time.Minute))
	require.NoError(t, err)
	require.Len(t, m.Parts, 1)
	_, err = os.Stat(filepath.Join(work, "run.json"))
	assert.True(t, os.IsNotExist(err), "nothing written beside the output folder")

	// The output is an input, inside one, or holds one: refused, nothing written.
	for _, c := range []struct{ out, in string }{{"o1", "o1"}, {filepath.Join(a, "merged"), a}, {root, a}} {
		_, err := reports.MergeRuns(c.out, []string{c.in}, at.Add(time.Minute))
		require.Error(t, err, "%+v", c)
		assert.Contains(t, err.Error(), "overlap")
	}
	_, err = os.Stat(filepath.Join(a, "merged"))
	assert.True(t, os.IsNotExist(err))

	// A folder given twice, and a merged folder beside one of its parts,
	// count each run once.
	m, err = reports.MergeRuns("twice", []string{a, a, b}, at.Add(time.Minute))
	require.NoError(t, err)
	assert.Equal(t, 2, m.Stats.Coverage.Sequences)
	m, err = reports.MergeRuns("again", []string{"twice", a}, at.Add(2*time.Minute))
	require.NoError(t, err)
	assert.Equal(t, 2, m.Stats.Coverage.Sequences, "the merged folder's copies of a and b, and a itself: two runs")

	// stats.json a FIFO, a link to /dev/zero, truncated, or with negative
	// counts: an error, at once, and no part copied.
	bad := func(name string, plant func(stats string)) {
		t.Helper()
		dir := filepath.Join(root, "bad", name)
		writePart(t, dir, at.Add(3*time.Second), reports.Pass)
		run, _ := filepath.Glob(filepath.Join(dir, "*", "stats.json"))
		require.Len(t, run, 1)
		require.NoError(t, os.Remove(run[0]))
		plant(run[0])
		out := filepath.Join(root, "out-"+name)
		_, err := reports.MergeRuns(out, []string{b, dir}, at.Add(time.Minute))
		require.Error(t, err, name)
		_, err = os.Stat(out)
		assert.True(t, os.IsNotExist(err), "%s: nothing written when a part is bad", name)
	}
	bad("fifo", func(p string) { require.NoError(t, syscall.Mkfifo(p, 0o644)) })
	bad("zero", func(p string) { require.NoError(t, os.Symlink("/dev/zero", p)) })
	bad("truncated", func(p string) { require.NoError(t, os.WriteFile(p, []byte(`{"test": "TestConf`), 0o644)) })
	bad("negative", func(p string) {
		require.NoError(t, os.WriteFile(p, []byte(`{"coverage": {"sequences": -980}}`), 0o644))
	})
}
