// Package inventory is the MCP client of --discover: Discover starts each configured MCP
// server (stdio command, streamable HTTP or SSE) with the official Go SDK, pages through
// tools/list and returns an mcpinventory.Inventory whose servers and tools say
// SourceDiscovered. The inventory's data types, the --inventory file parser and Infer are in
// package mcpinventory (neutral: the agent rooms may import it, not this package).
//
// Secrets: server env, headers and args are read only to start servers; they never appear
// in errors, results or output (internal/secret). A server's stderr is discarded unless the
// caller asks for it.
//
// inventory imports mcpconfig (the servers it starts), mcpinventory and
// internal/secret (plus the MCP Go SDK). It must not import a store, scan, rewrite, audit,
// reports or cmd.
package inventory
