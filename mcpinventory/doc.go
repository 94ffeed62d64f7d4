// Package mcpinventory holds the MCP tool inventory as data: the raw identities (configured
// server key + raw tool name as tools/list returns it) and each server's trust flag, which the
// audit and the scan need to tell legacy spellings from real names (audit.md "Inputs";
// naming.md).
//
// An Inventory comes from one of three sources, recorded on every server and tool:
//
//   - SourceFile: an --inventory JSON file (Load / Parse), in the format of audit.md §1:
//     {"servers": {"foo.bar": {"trust": false, "tools": ["get_data", "deploy.prod"]}}};
//   - SourceDiscovered: package inventory's Discover starts each configured MCP server and
//     pages through tools/list;
//   - SourceInferred: Infer derives server keys from a config's mcpServers and tool names from
//     names seen in session history, where that can be done without guessing.
//
// mcpinventory is neutral data and starts nothing, so the agent rooms (their audit plug-ins)
// may use it; the MCP client stays in package inventory, out of the rooms' reach.
package mcpinventory
