package claude

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHomeOf(t *testing.T) {
	for path, want := range map[string]string{
		"/home/u/.claude/projects/-home-demo-src-lab/dd19a9ca-e09f-48a6-9120-d559cf0db6fa.jsonl":                                   "/home/u/.claude",
		"/home/u/.claude/projects/-home-demo-src-api/441566c6-e193-4f5e-98cf-abf3928419e9/subagents/agent-a02640152bea9bd4b.jsonl": "/home/u/.claude",
		"/tmp/copy/dot-claude/projects/-x/s.jsonl":                                                                                 "/tmp/copy/dot-claude",
		"/tmp/projects/x/s/other/agent.jsonl":                                                                                      "",
		"/tmp/x/s.jsonl":                                                                                                           "",
		"/projects/-x/s.jsonl":                                                                                                     "",
		"/a/projects/b/projects/-x/s.jsonl":                                                                                        "/a/projects/b",
	} {
		assert.Equal(t, filepath.FromSlash(want), HomeOf(filepath.FromSlash(path)), path)
	}
}

func TestHomeAndConfig(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	assert.Equal(t, filepath.Join("/h", ".claude"), Home(getenv, "/h"))
	assert.Equal(t, filepath.Join("/h", ".claude.json"), GlobalConfigPath(getenv, "/h"))
	env[EnvConfigDir] = "/cfg"
	assert.Equal(t, "/cfg", Home(getenv, "/h"))
	assert.Equal(t, filepath.Join("/cfg", ".claude.json"), GlobalConfigPath(getenv, "/h"))

	dir := t.TempDir()
	home := filepath.Join(dir, "dot-claude")
	require.NoError(t, os.MkdirAll(home, 0o755))
	assert.Equal(t, "", ConfigFileOf(home))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "claude.json"), []byte("{}"), 0o644))
	assert.Equal(t, filepath.Join(dir, "claude.json"), ConfigFileOf(home))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".claude.json"), []byte("{}"), 0o644))
	assert.Equal(t, filepath.Join(dir, ".claude.json"), ConfigFileOf(home))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".claude.json"), []byte("{}"), 0o644))
	assert.Equal(t, filepath.Join(home, ".claude.json"), ConfigFileOf(home))
}

func TestKnownFile(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "dot-claude")
	require.NoError(t, os.MkdirAll(filepath.Join(cfg, "projects", "-p"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(cfg, "projects", "-p", "s.jsonl"), []byte("{}\n"), 0o644))
	for _, f := range []string{"claude.json", "other.json"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte("{}"), 0o644))
	}
	assert.Contains(t, KnownFile(filepath.Join(cfg, "settings.json")), "Claude Code settings")
	assert.Contains(t, KnownFile(filepath.Join(cfg, "settings.local.json")), "Claude Code settings")
	assert.Contains(t, KnownFile(filepath.Join(dir, "claude.json")), "Claude Code config")
	assert.Contains(t, KnownFile("/h/.claude.json"), "Claude Code config")
	assert.Contains(t, KnownFile("/h/src/.mcp.json"), "--mcp-config")
	assert.Empty(t, KnownFile(filepath.Join(dir, "other.json")))
	assert.Empty(t, KnownFile("/h/.qwen/settings.json"), "a Qwen Code settings file is not Claude Code's")
	assert.Empty(t, KnownFile(filepath.Join(t.TempDir(), "claude.json")), "a claude.json beside no config directory")
}
