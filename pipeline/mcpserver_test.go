package pipeline

import (
	"reflect"
	"testing"

	"github.com/sessionfix/sessionfix/store/agent"
	"github.com/sessionfix/sessionfix/store/qwen/settings"
)

// A settings file's server goes to --discover unchanged through agent.Server (Claude Code's
// .mcp.json SSE server keeps its transport, type and timeout); a Server without a transport
// is derived the way Codex's always was (Command: stdio, else URL: streamable HTTP, "url").
func TestMCPServerConversion(t *testing.T) {
	sse := settings.MCPServer{Key: "events", Transport: settings.TransportSSE, URL: "http://127.0.0.1:1/sse", URLKey: "url",
		Type: "sse", TimeoutMS: 2500, Headers: map[string]settings.Secret{"Authorization": settings.NewSecret("Bearer x")}}
	if got := mcpServer(agentServer(sse)); !reflect.DeepEqual(got, sse) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, sse)
	}
	cases := []struct {
		in   agent.Server
		want settings.MCPServer
	}{
		{agent.Server{Key: "a", Command: "run", URL: "http://x"}, settings.MCPServer{Key: "a", Transport: settings.TransportStdio, Command: "run", URL: "http://x"}},
		{agent.Server{Key: "b", URL: "http://x"}, settings.MCPServer{Key: "b", Transport: settings.TransportHTTP, URL: "http://x", URLKey: "url"}},
		{agent.Server{Key: "c"}, settings.MCPServer{Key: "c"}},
	}
	for _, c := range cases {
		if got := mcpServer(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("mcpServer(%+v) = %+v, want %+v", c.in, got, c.want)
		}
	}
}
