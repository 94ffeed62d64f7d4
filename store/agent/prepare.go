package agent

import (
	"context"

	"github.com/sessionfix/sessionfix/internal/secret"
	"github.com/sessionfix/sessionfix/store"
)

// Server is one MCP server an agent's config launches, the way --discover starts it: over
// Transport when set, else stdio when Command is set (Args, Cwd, Env over the process
// environment), else streamable HTTP at URL (Headers). Values from a config are secrets and
// never reach any output.
type Server struct {
	// Key is the configured server key: the <server> of mcp__<server>__<tool>.
	Key string
	// Transport is how the server is reached; "" derives it from Command / URL (above).
	Transport Transport
	Command   string
	Args      []secret.Secret
	Cwd       string
	URL       string
	// URLKey is the config key URL came from ("url", "httpUrl"), "" when none.
	URLKey string
	// Type is the config's "type" field ("http", "sse", "stdio"…) when present.
	Type string
	// TimeoutMS is the config's "timeout" field (milliseconds), 0 when absent.
	TimeoutMS int64
	Env       map[string]secret.Secret
	Headers   map[string]secret.Secret
}

// Transport is how an MCP server is reached: the values are those of
// store/qwen/settings.Transport (mcp-client.ts createTransport).
type Transport string

// The transports --discover can start.
const (
	TransportStdio Transport = "stdio"
	TransportHTTP  Transport = "http"
	TransportSSE   Transport = "sse"
)

// Tool is one raw (server key, tool name) pair of an inventory.
type Tool struct{ Server, Tool string }

// Discover lists the tools of servers (the MCP client lives above the rooms, in inventory,
// and is injected by pipeline). serverErrs are the servers that could not be listed (the run
// goes on without their tools); err is set when none of them could be listed or ctx ended.
type Discover func(ctx context.Context, servers []Server) (tools []Tool, serverErrs []error, err error)

// Problem is something preparing a policy found worth reporting: a file (Path) that could
// not be read, a server that could not be listed; an error makes the run partial (exit 3).
type Problem struct {
	Path     string
	Severity store.Severity
	Reason   string
}
