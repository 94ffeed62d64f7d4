// Package inventory holds the MCP tool inventory: the raw identities (configured server key +
// raw tool name as tools/list returns it) and each server's trust flag, which the audit and
// the scan need to tell legacy spellings from real names (audit.md "Inputs"; naming.md).
//
// An Inventory comes from one of three sources, recorded on every server and tool:
//
//   - SourceFile: an --inventory JSON file (Load / Parse), in the format of audit.md §1:
//     {"servers": {"foo.bar": {"trust": false, "tools": ["get_data", "deploy.prod"]}}};
//   - SourceDiscovered: Discover starts each configured MCP server (stdio command, streamable
//     HTTP or SSE) with the official Go SDK and pages through tools/list;
//   - SourceInferred: Infer derives server keys from a config's mcpServers and tool names from
//     names seen in session history, where that can be done without guessing.
//
// Secrets: server env, headers and args are read only to start servers; they never appear
// in errors, results or output (internal/secret). A server's stderr is discarded unless the
// caller asks for it.
//
// inventory imports mcpname, mcpconfig (the servers it starts) and internal/secret (plus the
// MCP Go SDK). It must not import a store, scan, rewrite, audit, reports or cmd.
package inventory
