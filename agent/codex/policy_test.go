package codex

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/store"
)

// TestGroupByHome: a rollout of a copied home is grouped with that home; a rollout in no home
// and one of the environment's home both go to the environment's home (FromEnv); groups are
// sorted by home and a store that is no rollout is left out.
func TestGroupByHome(t *testing.T) {
	dir := t.TempDir()
	write := func(rel string) string {
		p := filepath.Join(dir, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("{}\n"), 0o600))
		return p
	}
	write("copy/config.toml")
	inCopy := write("copy/sessions/2026/01/01/rollout-a.jsonl")
	write("env/config.toml")
	inEnv := write("env/sessions/2026/01/01/rollout-b.jsonl")
	loose := write("loose/rollout-c.jsonl")
	stores := []store.Store{jsonl.Open(inCopy, Rollout), jsonl.Open(loose, Rollout), jsonl.Open(inEnv, Rollout),
		jsonl.Open(write("other.jsonl"), &jsonl.Profile{Kind: "other"})}
	same := func(p string) string { return p }
	gs := GroupByHome(stores, same, filepath.Join(dir, "env"))
	require.Len(t, gs, 2)
	assert.Equal(t, HomeStores{Home: filepath.Join(dir, "copy"), Rollouts: []string{inCopy}}, *gs[0])
	assert.Equal(t, HomeStores{Home: filepath.Join(dir, "env"), FromEnv: true, Rollouts: []string{loose, inEnv}}, *gs[1])

	getenv := func(string) string { return "" }
	hist := write("copy/thread_history_1.sqlite")
	assert.Equal(t, []string{hist}, HistoryPaths(getenv, gs[0]))
}
