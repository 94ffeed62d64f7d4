package main

import (
	"context"
	"io"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stubCommand is the first argument that makes this program the MCP stub server: a config's
// server {"command": "$STUB", "args": ["mcp-stub", TOOL...]} lists the tools TOOL... over
// stdio (inputs: an empty object) and answers every call with an empty result, until its
// standard input closes.
const stubCommand = "mcp-stub"

func serveStub(tools []string) error {
	srv := mcp.NewServer(&mcp.Implementation{Name: "cmpbin-stub", Version: "1"},
		&mcp.ServerOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	for _, name := range tools {
		srv.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
	}
	return srv.Run(context.Background(), &mcp.StdioTransport{})
}
