// Package inventory is the MCP client of --discover: Discover starts each configured MCP
// server (stdio command, streamable HTTP or SSE) with the official Go SDK, pages through
// tools/list and returns an mcpinventory.Inventory whose servers and tools say
// SourceDiscovered. The inventory's data types, the --inventory file parser and Infer are in
// package mcpinventory (neutral data the agent rooms may use; this package, which starts
// servers, stays out of their reach).
//
// Secrets: server env, headers and args are read only to start servers; they never appear
// in errors, results or output (internal/secret). A server's stderr is discarded unless the
// caller asks for it.
package inventory
