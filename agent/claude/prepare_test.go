package claude

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/mcpconfig"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The policy of one home: keys of the global config's projects' .mcp.json (a missing one is
// no problem, an unreadable one a warning), of --mcp-config (a file given twice counts
// twice); the inventory file's tools and the discovered ones merged distinct and sorted, with
// the flag servers first in what Discover gets.
func TestHomePolicy(t *testing.T) {
	dir := t.TempDir()
	proj, bad := filepath.Join(dir, "proj"), filepath.Join(dir, "bad")
	require.NoError(t, os.MkdirAll(proj, 0o755))
	require.NoError(t, os.MkdirAll(bad, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(proj, ".mcp.json"), []byte(`{"mcpServers": {"p1": {"command": "run"}, "p2": {"url": "http://127.0.0.1:1/mcp"}}}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(bad, ".mcp.json"), []byte("{\n  \"mcpServers\": {\"x\": {},}\n}"), 0o644))
	cfg := filepath.Join(dir, "claude.json")
	require.NoError(t, os.WriteFile(cfg, []byte(`{"projects": {"`+proj+`": {}, "`+bad+`": {}, "`+filepath.Join(dir, "none")+`": {}}}`), 0o644))

	var got []string
	in := PrepareInput{Version: "2.1.0", MCPConfigs: []MCPConfig{{Path: "flag.json", Servers: []agent.Server{{Key: "f"}}}, {Path: "flag.json", Servers: []agent.Server{{Key: "f"}}}},
		InventoryFile: "inv.json", InventoryTools: []agent.Tool{{Server: "p2", Tool: "z"}, {Server: "f", Tool: "a"}},
		Discover: func(_ context.Context, ss []agent.Server) ([]agent.Tool, []error, error) {
			for _, s := range ss {
				got = append(got, s.Key)
			}
			return []agent.Tool{{Server: "p1", Tool: "b"}, {Server: "f", Tool: "a"}}, []error{errors.New("p2: down")}, nil
		}}
	pol, info, problems, err := HomePolicy(context.Background(), in, PolicyHome{Dir: dir, Config: cfg, Sessions: 3})
	require.NoError(t, err)
	assert.Equal(t, []string{"f", "f", "p1", "p2"}, got)
	assert.Equal(t, []mcpname.ClaudeTool{{Server: "f", Tool: "a"}, {Server: "p1", Tool: "b"}, {Server: "p2", Tool: "z"}}, pol.Tools)
	assert.Equal(t, "inv.json and the configured Claude Code MCP servers", pol.ToolsSource)
	assert.Equal(t, []string{filepath.Join(proj, ".mcp.json") + " (2)", "--mcp-config flag.json (2)", "--mcp-config flag.json (2)"}, info.KeySources)
	assert.Equal(t, 3, info.Keys)
	assert.Equal(t, 3, info.Sessions)
	assert.Equal(t, cfg, info.Config)
	assert.Equal(t, []agent.Problem{
		{Path: filepath.Join(bad, ".mcp.json"), Severity: store.SevWarning, Reason: filepath.Join(bad, ".mcp.json") + ":2:25: trailing comma; Claude Code does not accept trailing commas and ignores the whole file; its server keys are not used"},
		{Path: dir, Severity: store.SevError, Reason: "p2: down; its tools are not in the inventory"},
	}, problems)

	// --discover with no server configured anywhere is a usage error naming the home.
	_, _, _, err = HomePolicy(context.Background(), PrepareInput{Discover: in.Discover}, PolicyHome{Dir: dir, NoConfig: true})
	var ue *usage.Error
	require.ErrorAs(t, err, &ue)
	assert.Contains(t, err.Error(), "no Claude Code MCP server configured for "+dir)
}

// One home: its policy is the Default; two: each session path maps to its home's policy, and
// Info is per home in order.
func TestPrepare(t *testing.T) {
	in := PrepareInput{Version: "2.1.0", MCPConfigs: []MCPConfig{{Path: "f.json", Servers: []agent.Server{{Key: "k"}}}}}
	_, one, err := Prepare(context.Background(), in, []*HomeSessions{{Home: filepath.Join(t.TempDir(), "a"), Sessions: []string{"s1"}}})
	require.NoError(t, err)
	assert.Nil(t, one.ByPath)
	assert.Equal(t, []ClaudeKey{{Key: "k", Source: "f.json"}}, one.Default.Keys)

	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	prep, two, err := Prepare(context.Background(), in, []*HomeSessions{{Home: a, Sessions: []string{"s1", "s2"}}, {Home: b, Sessions: []string{"s3"}}})
	require.NoError(t, err)
	require.Len(t, two.ByPath, 3)
	assert.Same(t, two.ByPath["s1"], two.ByPath["s2"])
	assert.NotSame(t, two.ByPath["s1"], two.ByPath["s3"])
	require.Len(t, prep.Info, 2)
	i0, i1 := prep.Info[0].(*Info), prep.Info[1].(*Info)
	assert.Equal(t, []string{a, b}, []string{i0.Home, i1.Home})
	assert.Equal(t, []int{2, 1}, []int{i0.Sessions, i1.Sessions})
}

// A Claude Code MCP config's servers, in file order, as --discover starts them: an SSE server
// keeps its transport, type and timeout; values are expanded over the environment and secret.
func TestParseServers(t *testing.T) {
	data := []byte(`{"mcpServers": {
  "events": {"type": "sse", "url": "http://127.0.0.1:1/$P", "timeout": 2500, "headers": {"Authorization": "Bearer ${TOK}"}},
  "local": {"command": "srv", "args": ["--key", "$TOK"], "env": {"UNSET": "$NOPE"}}
}}`)
	ss, err := ParseServers("/p/.mcp.json", data, mcpconfig.Origin{}, mcpconfig.Env{"P": "sse", "TOK": "sk-SECRET"})
	require.NoError(t, err)
	require.Len(t, ss, 2)
	ev, local := ss[0], ss[1]
	assert.Equal(t, []string{"events", "local"}, []string{ev.Key, local.Key})
	assert.Equal(t, agent.TransportSSE, ev.Transport)
	assert.Equal(t, "http://127.0.0.1:1/sse", ev.URL)
	assert.Equal(t, "sse", ev.Type)
	assert.Equal(t, int64(2500), ev.TimeoutMS)
	assert.Equal(t, "Bearer sk-SECRET", ev.Headers["Authorization"].Reveal())
	assert.Equal(t, agent.TransportStdio, local.Transport)
	require.Len(t, local.Args, 2)
	assert.Equal(t, "sk-SECRET", local.Args[1].Reveal())
	assert.Equal(t, "$NOPE", local.Env["UNSET"].Reveal(), "an undefined variable stays as written")
	assert.NotContains(t, fmt.Sprintf("%v %+v", ss, ss), "SECRET")

	_, err = ParseServers("/p/.mcp.json", []byte("\ufeff{}"), mcpconfig.Origin{}, nil)
	assert.EqualError(t, err, "/p/.mcp.json:1:1: file starts with a UTF-8 byte order mark; Claude Code's JSON.parse rejects it and ignores the whole file")
}
