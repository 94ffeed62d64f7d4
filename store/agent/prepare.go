package agent

import (
	"context"

	"github.com/sessionfix/sessionfix/mcpconfig"
	"github.com/sessionfix/sessionfix/store"
)

// Server is one MCP server an agent's config launches, the way --discover starts it
// (mcpconfig.Server: the one server type of every room; Reach derives a missing Transport from
// Command / URL). Values from a config are secrets and never reach any output.
type Server = mcpconfig.Server

// Transport is how an MCP server is reached (mcpconfig.Transport).
type Transport = mcpconfig.Transport

// The transports --discover can start.
const (
	TransportStdio = mcpconfig.TransportStdio
	TransportHTTP  = mcpconfig.TransportHTTP
	TransportSSE   = mcpconfig.TransportSSE
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
