package doccheck

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// workflow is the part of a GitHub Actions workflow these checks read.
type workflow struct {
	Env  map[string]string `yaml:"env"`
	Jobs map[string]struct {
		Needs    any `yaml:"needs"`
		If       string
		Strategy struct {
			Matrix map[string][]int `yaml:"matrix"`
		} `yaml:"strategy"`
		Steps []struct {
			Name string            `yaml:"name"`
			Uses string            `yaml:"uses"`
			Run  string            `yaml:"run"`
			If   string            `yaml:"if"`
			Env  map[string]string `yaml:"env"`
			With map[string]string `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// TestShardedWorkflow: .github/workflows/sharded.yml is valid YAML; its
// matrix numbers the shards 0 … SHARDS-1, each runs with IDEMCHECK_SHARD
// and one seed and uploads its folder even when it failed, and the merge
// job waits for them all, downloads every shard's artifact, runs
// idemcheck merge over them and uploads the result.
func TestShardedWorkflow(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(root, ".github", "workflows", "sharded.yml"))
	require.NoError(t, err)
	var w workflow
	require.NoError(t, yaml.Unmarshal(raw, &w))
	shard, merge := w.Jobs["shard"], w.Jobs["merge"]
	shards := shard.Strategy.Matrix["shard"]
	require.NotEmpty(t, shards)
	assert.Equal(t, fmt.Sprint(len(shards)), w.Env["SHARDS"], "SHARDS is the matrix's length")
	for i, s := range shards {
		assert.Equal(t, i, s, "the shards are numbered 0 … n-1")
	}
	var ran, uploaded bool
	for _, st := range shard.Steps {
		if v, ok := st.Env["IDEMCHECK_SHARD"]; ok {
			ran = true
			assert.Equal(t, "${{ matrix.shard }}/${{ env.SHARDS }}", v)
			assert.Contains(t, st.Run, "--seed \"${{ github.run_id }}\"", "one seed for every shard")
			assert.Contains(t, st.Run, "--report-dir \"shard-${{ matrix.shard }}\"")
		}
		if strings.HasPrefix(st.Uses, "actions/upload-artifact@") {
			uploaded = true
			assert.Equal(t, "always()", st.If, "a failing shard's folder is uploaded too")
			assert.Equal(t, "shard-${{ matrix.shard }}/", st.With["path"])
			assert.Equal(t, "idemcheck-shard-${{ matrix.shard }}", st.With["name"])
		}
	}
	assert.True(t, ran && uploaded, "each shard runs idemcheck with IDEMCHECK_SHARD and uploads its folder")
	assert.Equal(t, "shard", merge.Needs)
	assert.Equal(t, "always()", merge.If, "the merge runs when a shard failed")
	var downloaded, merged, kept bool
	for _, st := range merge.Steps {
		switch {
		case strings.HasPrefix(st.Uses, "actions/download-artifact@"):
			downloaded = st.With["pattern"] == "idemcheck-shard-*" && st.With["path"] == "shards"
		case strings.Contains(st.Run, "idemcheck\" merge"):
			merged = downloaded && strings.Contains(st.Run, "\"$RUNNER_TEMP/idemcheck\" merge -o merged shards/*")
		case strings.HasPrefix(st.Uses, "actions/upload-artifact@"):
			kept = merged && st.With["path"] == "merged/" && st.If == "always()"
		}
	}
	assert.True(t, downloaded && merged && kept, "the merge job downloads every shard, merges them, then uploads merged/")
}
