package main

import (
	"github.com/sessionfix/sessionfix/internal/exitcode"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCodexHomeWithSymlinkedSessions: a Codex home whose sessions/ is a symbolic link to
// another disk (a common way to move a large history) is planned with that home's config.toml,
// whether PATH is the home, its sessions/ link, or the default ~/.codex: the home is where the
// link is, not the directory the link points into.
func TestCodexHomeWithSymlinkedSessions(t *testing.T) {
	orig := readFixture(t, "rollout-codex-0.50.0.jsonl")
	home, path := codexHome(t, orig, true)
	cfg := filepath.Join(home, "config.toml")
	// Move sessions/ elsewhere and link it back.
	elsewhere := filepath.Join(t.TempDir(), "disk2", "sessions")
	require.NoError(t, os.MkdirAll(filepath.Dir(elsewhere), 0o755))
	require.NoError(t, os.Rename(filepath.Join(home, "sessions"), elsewhere))
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(home, "sessions")))
	real, err := filepath.EvalSymlinks(path)
	require.NoError(t, err)

	e := newCodexEnv(t, nil)
	for _, arg := range []string{home, filepath.Join(home, "sessions")} {
		require.Equal(t, exitcode.OK, e.run(t, "fix", "--format", "json", arg), e.err.String())
		got, rep := callRenames(t, e.out.Bytes())
		assert.Equal(t, userCodexNames, got, "PATH %s", arg)
		if assert.Len(t, rep.Codex, 1, "PATH %s", arg) {
			assert.Equal(t, cfg, rep.Codex[0].Config, "PATH %s", arg)
			assert.Equal(t, home, rep.Codex[0].Home, "PATH %s", arg)
		}
		if assert.Len(t, rep.Stores, 1) {
			assert.Equal(t, real, rep.Stores[0].Path, "stores are named by their real path (the manifest's)")
		}
	}
	require.Equal(t, exitcode.OK, e.run(t, "fix", home), e.err.String())
	assert.Contains(t, e.err.String(), "note: "+filepath.Join(home, "sessions")+": symbolic link to "+elsewhere+": followed")
	assert.Contains(t, e.out.String(), "would rewrite 4 names in 1 file")

	// --apply then undo: the run's roots include the directory the link points to, so undo
	// restores the rollout (before: "the store path is outside the run's roots").
	state := t.TempDir()
	require.Equal(t, exitcode.OK, e.run(t, "fix", "--apply", "--yes", "--state-dir", state, home), e.err.String())
	b, err := os.ReadFile(real)
	require.NoError(t, err)
	assert.NotEqual(t, orig, b)
	require.Equal(t, exitcode.OK, e.run(t, "undo", "--last", "--state-dir", state), e.err.String())
	b, err = os.ReadFile(real)
	require.NoError(t, err)
	assert.Equal(t, orig, b, "undo gives the original bytes back")

	// The default home ~/.codex with a linked sessions/: its own config.toml, named as ~/.codex.
	e2 := newCodexEnv(t, nil)
	dot := filepath.Join(e2.Home, ".codex")
	require.NoError(t, os.MkdirAll(dot, 0o755))
	require.NoError(t, os.Rename(cfg, filepath.Join(dot, "config.toml")))
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(dot, "sessions")))
	require.Equal(t, exitcode.OK, e2.run(t, "fix", "--agent", "codex", "--format", "json"), e2.err.String())
	got, rep := callRenames(t, e2.out.Bytes())
	assert.Equal(t, userCodexNames, got)
	if assert.Len(t, rep.Codex, 1) {
		assert.Equal(t, filepath.Join(dot, "config.toml"), rep.Codex[0].Config)
		assert.Equal(t, "~/.codex", rep.Codex[0].ConfigFrom)
	}
}

// TestCodexDamagedThreadHistoryIsPartial: a thread_history_*.sqlite that cannot be read is an
// input that could not be read (exit 3), whatever the damage: without its identities the tool
// set misses tools, and a colliding name gets no suffix (here literature_search_pubmed instead
// of literature_search_pubmed_977c8bf14fb3). Before, garbage bytes were a warning and exit 0,
// a truncated database exit 3.
func TestCodexDamagedThreadHistoryIsPartial(t *testing.T) {
	orig := readFixture(t, "rollout-codex-0.50.0.jsonl")
	for name, content := range map[string][]byte{
		"garbage":   []byte("this is not a database, just text written over it\n"),
		"truncated": []byte("SQLite format 3\x00\x10\x00\x01\x01\x00\x40\x20\x20"),
	} {
		t.Run(name, func(t *testing.T) {
			home, _ := codexHome(t, orig, true)
			db := filepath.Join(home, "thread_history_1.sqlite")
			require.NoError(t, os.WriteFile(db, content, 0o600))
			e := newCodexEnv(t, nil)
			assert.Equal(t, exitcode.Partial, e.run(t, "fix", home), e.err.String())
			assert.Contains(t, e.err.String(), db+": error: Codex thread history not read, its raw identities are not used for naming: ")
		})
	}
}

// TestCodexBrokenHomeConfigLeavesOnlyThatHome: `fix tickets/` over several copied homes, one
// with a config.toml that is not valid TOML: that home's rollouts are left as they are (planning
// them without the config could pick the wrong names) and the error names file:line; the other
// homes are planned and rewritten; the run is partial (exit 3), not a fatal error.
func TestCodexBrokenHomeConfigLeavesOnlyThatHome(t *testing.T) {
	orig := readFixture(t, "rollout-codex-0.50.0.jsonl")
	good, goodPath := codexHome(t, orig, true)
	bad, badPath := codexHome(t, orig, false)
	badCfg := filepath.Join(bad, "config.toml")
	require.NoError(t, os.WriteFile(badCfg, []byte("[mcp_servers.lit\ncommand = \"sk-secret-value\"\n"), 0o600))
	buildHistory(t, bad) // would attribute every name if the home were planned without its config
	e := newCodexEnv(t, nil)

	for _, cmd := range []string{"scan", "fix"} {
		require.Equal(t, exitcode.Partial, e.run(t, cmd, good, bad), e.err.String())
		assert.Contains(t, e.err.String(), badCfg+": error: invalid Codex config.toml: line 1, column 17: expected '.' or ']' to end table name, but got '\\n' instead; the 1 rollout of this Codex home is left as it is (fix the file, or pass --codex-config)", cmd)
		assert.NotContains(t, e.out.String()+e.err.String(), "sk-secret-value")
		assert.Contains(t, e.out.String(), "; 1 store left out (see errors)\n", cmd+": the closing line does not read as all clean")
	}
	require.Equal(t, exitcode.Partial, e.run(t, "fix", "--format", "json", good, bad), e.err.String())
	got, rep := callRenames(t, e.out.Bytes())
	assert.Equal(t, userCodexNames, got)
	require.Len(t, rep.Stores, 1)
	assert.Equal(t, goodPath, rep.Stores[0].Path)

	require.Equal(t, exitcode.Partial, e.run(t, "fix", "--apply", "--yes", "--state-dir", t.TempDir(), good, bad), e.err.String())
	b, err := os.ReadFile(badPath)
	require.NoError(t, err)
	assert.Equal(t, orig, b, "the broken home's rollout is untouched")
	b, err = os.ReadFile(goodPath)
	require.NoError(t, err)
	assert.NotEqual(t, orig, b, "the other home is repaired")

	// Interactive: the second pass (after "y") leaves the broken home out too.
	require.NoError(t, os.WriteFile(goodPath, orig, 0o640))
	e.In, e.InTerminal = strings.NewReader("y\n"), true
	require.Equal(t, exitcode.Partial, e.run(t, "fix", "--apply", "--state-dir", t.TempDir(), good, bad), e.err.String())
	b, err = os.ReadFile(badPath)
	require.NoError(t, err)
	assert.Equal(t, orig, b, "the broken home's rollout is untouched (interactive)")
	b, err = os.ReadFile(goodPath)
	require.NoError(t, err)
	assert.NotEqual(t, orig, b, "the other home is repaired (interactive)")

	// --codex-config naming a broken file is still an error of the whole run.
	assert.Equal(t, exitcode.Error, e.run(t, "fix", "--codex-config", badCfg, good))
	assert.Contains(t, e.err.String(), "invalid Codex config.toml: line 1, column 17")
}

// TestKeptHintFitsWhatWasGiven: the fix hint for codex-unattributed names only suggests giving
// the whole Codex home as PATH when a rollout was not planned with a home of PATH; when the
// home was given and has neither a config.toml naming the servers nor a thread history, it says
// so instead of suggesting what was just done.
func TestKeptHintFitsWhatWasGiven(t *testing.T) {
	orig := readFixture(t, "rollout-codex-0.50.0.jsonl")
	bare, path := codexHome(t, orig, false)
	e := newCodexEnv(t, nil)
	require.Equal(t, exitcode.OK, e.run(t, "fix", bare), e.err.String())
	assert.Contains(t, e.out.String(), "4 codex-unattributed (raw MCP identity unknown; fix: pass --inventory or --codex-config (the Codex home given has no config.toml server key and no thread history matching these calls))")
	assert.NotContains(t, e.out.String(), "give the whole Codex home as PATH")

	// A rollout copied out of its home: planned with ~/.codex (empty here).
	loose := filepath.Join(t.TempDir(), filepath.Base(path))
	require.NoError(t, os.WriteFile(loose, orig, 0o600))
	require.Equal(t, exitcode.OK, e.run(t, "fix", loose), e.err.String())
	assert.Contains(t, e.out.String(), "4 codex-unattributed (raw MCP identity unknown; fix: pass --inventory or --codex-config, or give the whole Codex home as PATH so its config.toml and thread_history_*.sqlite are read)")
}
