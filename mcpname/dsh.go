package mcpname

import (
	"crypto/sha256"
	"encoding/hex"
)

// Constants of DSH (DeepSeek Harness) public MCP tool names, schemes.md §B.2
// (deepseek-ai/deepseek-harness packages/mcp/mcp-client/src/tools.ts @ b150a551b8). Lengths
// count UTF-16 code units.
const (
	// DSHMaxLength is MAX_PUBLIC_NAME_LENGTH.
	DSHMaxLength = 64
	// DSHHashLength is the number of SHA-256 hex digits in the suffix (HASH_LENGTH).
	DSHHashLength = 12
	// DSHHeadLength is what a hashed name keeps of the sanitized name: 64 - 12 - 1.
	DSHHeadLength = DSHMaxLength - DSHHashLength - 1
)

// DSHPublicName is DSH's publicToolName(serverName, rawName) (schemes.md §B.2): joined =
// "mcp__" + server + "__" + raw; every UTF-16 code unit outside [A-Za-z0-9_-] becomes "_" (an
// astral character becomes "__"). A name that needed no replacement and has at most 64 units is
// returned verbatim; any other gets its first 51 units, "_", and the first 12 lower-case hex
// digits of SHA-256 over the UTF-8 of server + NUL + raw, which makes it exactly 64 units when
// it is that long. The hash does not depend on collisions: the result is a pure function of
// (server, raw). Invalid UTF-8 bytes count as U+FFFD, as Node.js decodes them.
func DSHPublicName(server, raw string) string {
	joined := Units(Prefix + server + "__" + raw)
	norm := make([]byte, len(joined))
	clean := len(joined) <= DSHMaxLength
	for i, c := range joined {
		if isProviderChar(c) {
			norm[i] = byte(c)
		} else {
			norm[i] = '_'
			clean = false
		}
	}
	if clean {
		return string(norm)
	}
	sum := sha256.Sum256([]byte(String(Units(server + "\x00" + raw))))
	return string(norm[:min(len(norm), DSHHeadLength)]) + "_" + hex.EncodeToString(sum[:])[:DSHHashLength]
}
