package main

import (
	"fmt"
	"github.com/sessionfix/sessionfix/internal/exitcode"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Flags are validated before any side effect (issue 10 item 3): a contradictory or invalid
// combination is a usage error before --discover starts an MCP server (here one that leaves a
// marker file when it starts) and before fix --apply removes temp files of killed runs.
func TestFlagsValidatedBeforeSideEffects(t *testing.T) {
	home, path := codexHome(t, readFixture(t, "rollout-codex-0.50.0.jsonl"), false)
	marker := filepath.Join(t.TempDir(), "server-started")
	cfg := fmt.Sprintf("[mcp_servers.m]\ncommand = \"/bin/sh\"\nargs = [\"-c\", \"touch %s; exit 1\"]\n", marker)
	require.NoError(t, os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600))
	e := newCodexEnv(t, map[string]string{"CODEX_HOME": home})

	for _, args := range [][]string{
		{"fix", "--discover", "--quiet", "--verbose", path},
		{"fix", "--apply", "--yes", "--discover", "--quiet", "--verbose", path},
		{"fix", "--discover", "--rewrite-lossy", path},
		{"fix", "--discover", "--agent", "nobody", path},
		{"scan", "--discover", "--busy-timeout", "-1s", path},
		{"check", "--provider", "all", "--discover", "--rewrite-lossy", path},
	} {
		assert.Equal(t, exitcode.Usage, e.run(t, args...), "%v: %s", args, e.err.String())
		assert.NoFileExists(t, marker, "%v started an MCP server before refusing its flags", args)
	}
	// The same server is started once the flags are valid (the marker proves the probe works).
	e.run(t, "fix", "--discover", path)
	assert.FileExists(t, marker)
}
