package mcpname

import "strings"

// claudeAIServerPrefix starts the names of claude.ai connector servers in Claude Code
// (CLAUDEAI_SERVER_PREFIX, src/services/mcp/normalization.ts).
const claudeAIServerPrefix = "claude.ai "

// ClaudeNormalize is Claude Code's normalizeNameForMCP (schemes.md §C.1;
// src/services/mcp/normalization.ts, as read in leaked-source mirrors): every UTF-16 code unit
// outside [a-zA-Z0-9_-] becomes "_" (an astral character becomes "__"). When name starts with
// "claude.ai ", runs of "_" then collapse to one and one leading and one trailing "_" are
// dropped. There is no length cap, truncation or hash.
func ClaudeNormalize(name string) string {
	n := ProviderSubstitute(name)
	if !strings.HasPrefix(name, claudeAIServerPrefix) {
		return n
	}
	var out strings.Builder
	for i := 0; i < len(n); i++ {
		if n[i] == '_' && i > 0 && n[i-1] == '_' {
			continue
		}
		out.WriteByte(n[i])
	}
	n = strings.TrimPrefix(out.String(), "_")
	return strings.TrimSuffix(n, "_")
}

// ClaudePrefix is Claude Code's getMcpPrefix (src/services/mcp/mcpStringUtils.ts):
// "mcp__" + ClaudeNormalize(server) + "__". A permission rule equal to the prefix without the
// trailing "__" matches every tool of the server (schemes.md §C.3).
func ClaudePrefix(server string) string { return Prefix + ClaudeNormalize(server) + "__" }

// ClaudeName is the model-visible name Claude Code gives an MCP tool (schemes.md §C.1,
// buildMcpToolName): ClaudePrefix(server) + ClaudeNormalize(tool). Plugin servers
// "plugin:<plugin>:<server>" come out as "mcp__plugin_<plugin>_<server>__<tool>". Names are not
// capped or de-duplicated, so they can exceed the API's 64 and collide, and splitting them on
// "__" is ambiguous ("my..server" → "mcp__my__server__…"). The SDK no-prefix mode
// (CLAUDE_AGENT_SDK_MCP_NO_PREFIX) is not modelled: there the name is the raw tool name.
func ClaudeName(server, tool string) string { return ClaudePrefix(server) + ClaudeNormalize(tool) }
