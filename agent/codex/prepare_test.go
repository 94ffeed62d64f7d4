package codex

import (
	"fmt"
	"testing"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServers: the enabled servers of a config, in key order, with args, env and headers as
// secrets and the bearer token from bearer_token_env_var as an Authorization header.
func TestServers(t *testing.T) {
	cfg := &Config{Servers: map[string]Server{
		"b_web": {Enabled: true, URL: "https://h/mcp", HTTPHeaders: map[string]string{"X": "HDR"}, BearerTokenEnvVar: "TOK"},
		"a_cli": {Enabled: true, Command: "node", Args: []string{"--key", "ARG"}, Cwd: "/w", Env: map[string]string{"E": "ENV"}},
		"c_off": {Enabled: false, Command: "x"},
	}}
	got := Servers(func(k string) string { return map[string]string{"TOK": "T0K"}[k] }, cfg)
	require.Len(t, got, 2)
	assert.Equal(t, "a_cli", got[0].Key)
	assert.Equal(t, "node", got[0].Command)
	assert.Equal(t, "/w", got[0].Cwd)
	require.Len(t, got[0].Args, 2)
	assert.Equal(t, "ARG", got[0].Args[1].Reveal())
	assert.Equal(t, "ENV", got[0].Env["E"].Reveal())
	assert.Equal(t, "b_web", got[1].Key)
	assert.Equal(t, "https://h/mcp", got[1].URL)
	assert.Equal(t, "HDR", got[1].Headers["X"].Reveal())
	assert.Equal(t, "Bearer T0K", got[1].Headers["Authorization"].Reveal())
	assert.NotContains(t, fmt.Sprintf("%v %+v", got, got), "ARG", "secrets never print")
}

// TestRawTools: the --inventory and discovered tools merge into distinct pairs sorted by
// server then tool (an inventory merge), never nil.
func TestRawTools(t *testing.T) {
	got := rawTools([]agent.Tool{{Server: "s", Tool: "b"}, {Server: "r", Tool: "z"}, {Server: "s", Tool: "a"}, {Server: "s", Tool: "b"}})
	assert.Equal(t, []mcpname.CodexTool{{Server: "r", Tool: "z"}, {Server: "s", Tool: "a"}, {Server: "s", Tool: "b"}}, got)
	assert.NotNil(t, rawTools(nil))
}
