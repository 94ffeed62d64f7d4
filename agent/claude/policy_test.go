package claude

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/store"
)

// TestGroupByHome: sessions of a copied config directory are grouped with it; a session in no
// config directory and one of the environment's go to the environment's (FromEnv); other
// stores are left out; groups are sorted by home.
func TestGroupByHome(t *testing.T) {
	dir := t.TempDir()
	write := func(rel string) string {
		p := filepath.Join(dir, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("{}\n"), 0o600))
		return p
	}
	a := write("copy/projects/-src-a/1.jsonl")
	b := write("copy/projects/-src-b/2.jsonl")
	env := write("env/projects/-src-c/3.jsonl")
	loose := write("loose/4.jsonl")
	stores := []store.Store{jsonl.Open(a, Session), jsonl.Open(env, Session), jsonl.Open(loose, Session), jsonl.Open(b, Session),
		jsonl.Open(write("copy/projects/-src-a/x.jsonl"), &jsonl.Profile{Kind: "other"})}
	gs := GroupByHome(stores, func(p string) string { return p }, filepath.Join(dir, "env"))
	require.Len(t, gs, 2)
	assert.Equal(t, HomeSessions{Home: filepath.Join(dir, "copy"), Sessions: []string{a, b}}, *gs[0])
	assert.Equal(t, HomeSessions{Home: filepath.Join(dir, "env"), FromEnv: true, Sessions: []string{env, loose}}, *gs[1])
}
