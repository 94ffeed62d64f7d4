package mcpname

import (
	"crypto/sha1"
	"encoding/hex"
	"strings"
)

// Cline's MCP tool names, per generation (issue 27; fixtures/cline-real/README.md "Naming",
// recorded with the npm releases cline 2.18.0 and 3.0.65 against a loopback OpenAI-compatible
// stand-in; docs/cline.md says the same in prose).
//
// Cline 2.x (the CLI 2.x and the VS Code extension core it bundles, 3.82.0 in the recording),
// with native tool calling, offers a tool as uid + "0mcp0" + the raw tool name: no sanitizing,
// no cap; uid is "c" + 5 random characters per server, drawn anew at every start of the MCP
// hub. A tool whose whole name would exceed 64 UTF-16 units is not offered at all. In the XML
// era (models without native tools) names appear only inside assistant text.
//
// Cline 3.x (3.0.65, the SDK CLI) offers "server__tool", kept when it is already
// [A-Za-z0-9_-] and at most 64 long, else sanitize(server__tool) cut to 55, or "mcp_tool"
// when empty, + "_" + the first 8 hex digits of SHA-1 over the raw "server__tool" (UTF-8).
// sanitize turns each run of characters outside [A-Za-z0-9_-] into one "_".

// Cline2Marker joins a Cline 2.x server uid and the raw tool name ("cOeQcj0mcp0get+data").
const Cline2Marker = "0mcp0"

// Cline2UIDLen is the length of a Cline 2.x server uid: "c" + 5 random characters.
const Cline2UIDLen = 6

// ClineMaxLength is the longest tool name either Cline generation offers: 2.x drops a longer
// tool, 3.x hashes it down (UTF-16 units).
const ClineMaxLength = 64

// Cline3Join joins server key and tool in a Cline 3.x name.
const Cline3Join = "__"

// cline3CutLen and cline3HashLen shape a hashed Cline 3.x name: 55 + "_" + 8 = 64.
const (
	cline3CutLen  = 55
	cline3HashLen = 8
)

// Cline2Name is the name Cline 2.x offers for raw tool of the server whose current uid is uid
// (uid + "0mcp0" + tool); ok false when that name exceeds ClineMaxLength UTF-16 units: 2.x
// then does not offer the tool at all (measured: the 56- and 74-unit tools of the recording).
func Cline2Name(uid, tool string) (name string, ok bool) {
	name = uid + Cline2Marker + tool
	return name, Len(name) <= ClineMaxLength
}

// Cline2Split splits a stored Cline 2.x native-era name into its server uid and raw tool
// ("cOeQcj0mcp0literature.search_pubmed" → "cOeQcj", "literature.search_pubmed"); ok false
// when name is not uid + "0mcp0" + a non-empty tool (a built-in tool such as
// "attempt_completion"). The uid is "c" + 5 characters of [A-Za-z0-9_-].
func Cline2Split(name string) (uid, tool string, ok bool) {
	if len(name) <= Cline2UIDLen+len(Cline2Marker) || name[0] != 'c' || name[Cline2UIDLen:Cline2UIDLen+len(Cline2Marker)] != Cline2Marker {
		return "", "", false
	}
	for i := 1; i < Cline2UIDLen; i++ {
		if !isProviderChar(uint16(name[i])) {
			return "", "", false
		}
	}
	return name[:Cline2UIDLen], name[Cline2UIDLen+len(Cline2Marker):], true
}

// Cline3Raw is the raw joined identity Cline 3.x names and hashes: server + "__" + tool.
func Cline3Raw(server, tool string) string { return server + Cline3Join + tool }

// Cline3Name is the name Cline 3.x (3.0.65) offers for a tool of a server (Cline3Normalize of
// Cline3Raw(server, tool)). Vectors: fixtures/cline-real/README.md "Naming" (every name 3.0.65
// offered in the recording).
func Cline3Name(server, tool string) string { return Cline3Normalize(Cline3Raw(server, tool)) }

// Cline3Normalize is Cline 3.x's rule over a raw joined name: kept when it is 1 to 64
// characters of [A-Za-z0-9_-], else Cline3Sanitize(raw) cut to 55 bytes ("mcp_tool" when that
// is empty) + "_" + the first 8 hex digits of SHA-1 of raw's UTF-8 bytes. Every result is
// 1 to 64 characters of [A-Za-z0-9_-], and the rule keeps its own results (idempotent), so a
// stored 3.x name that is not a result was written by another rule.
func Cline3Normalize(raw string) string {
	if IsClineSafe(raw) {
		return raw
	}
	s := Cline3Sanitize(raw)
	if len(s) > cline3CutLen {
		s = s[:cline3CutLen]
	}
	if s == "" {
		s = "mcp_tool"
	}
	sum := sha1.Sum([]byte(raw))
	return s + "_" + hex.EncodeToString(sum[:])[:cline3HashLen]
}

// Cline3Sanitize replaces each run of characters outside [A-Za-z0-9_-] with one "_"
// ("lit__搜索文献" → "lit___"). The result is ASCII.
func Cline3Sanitize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	run := false
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x80 && isProviderChar(uint16(c)) {
			b.WriteByte(c)
			run = false
		} else if !run {
			b.WriteByte('_')
			run = true
		}
	}
	return b.String()
}

// IsClineSafe reports whether name passes Cline's own check and the strict providers' pattern
// ^[a-zA-Z0-9_-]{1,64}$ (no first-letter rule: a Cline name may start with "_" or a digit).
func IsClineSafe(name string) bool {
	if len(name) == 0 || len(name) > ClineMaxLength {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !isProviderChar(uint16(name[i])) {
			return false
		}
	}
	return true
}
