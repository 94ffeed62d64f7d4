package mcpname

import (
	"strconv"
	"unicode/utf16"
)

// Constants of Qwen Code's provider-safe naming (packages/core/src/utils/tool-name-utils.ts,
// Qwen Code 0.24.4; spec: naming.md and qwen-reference.md §1.2). Lengths are UTF-16 code units.
const (
	// MaxLength is the longest name a strict provider accepts (MAX_TOOL_NAME_LENGTH).
	MaxLength = 63
	// LegacyHeadLength is the head kept by the legacy middle truncation.
	LegacyHeadLength = 28
	// LegacyTailLength is the tail kept by the legacy middle truncation.
	LegacyTailLength = 32
	// LegacyJoiner is injected between head and tail by the legacy middle truncation.
	LegacyJoiner = "___"
	// Prefix starts every fully qualified MCP tool name; "__" separates server and tool.
	Prefix = "mcp__"
	// HashLength is the width of the base-36 FNV-1a text (max uint32 is "1z141z3").
	HashLength = 7

	fallbackPrefix = "tool_"
	fnvOffset32    = 2166136261
	fnvPrime32     = 16777619
)

// Units returns the UTF-16 code units of s, as a JavaScript string holds them. Invalid UTF-8
// bytes become U+FFFD (one unit each), which is what Node.js does when it decodes a file.
func Units(s string) []uint16 { return appendUnits(make([]uint16, 0, len(s)), s) }

// appendUnits appends the UTF-16 code units of s to dst (as utf16.Encode([]rune(s)): invalid
// UTF-8 bytes become U+FFFD). A string never has more units than bytes.
func appendUnits(dst []uint16, s string) []uint16 {
	for _, r := range s {
		dst = utf16.AppendRune(dst, r)
	}
	return dst
}

// String converts UTF-16 code units back to a Go string. A lone surrogate becomes U+FFFD, so
// String(Units(s)) == s only for valid UTF-8 without lone surrogates; keep the units when exact
// round trips of malformed names matter.
func String(u []uint16) string { return string(utf16.Decode(u)) }

// FNV1a32 is the 32-bit FNV-1a hash over UTF-16 code units (Qwen Code stableToolNameHash):
// h = 2166136261; for each unit: h = (h XOR unit) * 16777619 mod 2^32.
func FNV1a32(u []uint16) uint32 {
	h := uint32(fnvOffset32)
	for _, c := range u {
		h = (h ^ uint32(c)) * fnvPrime32
	}
	return h
}

// HashText formats h as Qwen Code does: lower-case base 36, left-padded with '0' to 7 digits.
func HashText(h uint32) string {
	s := strconv.FormatUint(uint64(h), 36)
	for len(s) < HashLength {
		s = "0" + s
	}
	return s
}

// Hash returns the 7-character hash text of name's UTF-16 units (FNV-1a 32-bit, base 36).
func Hash(name string) string { return HashText(FNV1a32(Units(name))) }

// IsProviderSafe reports whether name matches ^[A-Za-z][A-Za-z0-9_-]*$ and is at most 63 units
// long: the names Gemini, OpenAI-compatible and Anthropic-compatible providers all accept.
func IsProviderSafe(name string) bool {
	if len(name) == 0 || len(name) > MaxLength || !isLetter(name[0]) {
		return false
	}
	for i := 1; i < len(name); i++ {
		if !isProviderChar(uint16(name[i])) {
			return false
		}
	}
	return true
}

// IsProviderSafeUnits is IsProviderSafe over UTF-16 code units.
func IsProviderSafeUnits(u []uint16) bool {
	if len(u) == 0 || len(u) > MaxLength || u[0] > 0x7f || !isLetter(byte(u[0])) {
		return false
	}
	for _, c := range u[1:] {
		if !isProviderChar(c) {
			return false
		}
	}
	return true
}

// SanitizeUnits is Qwen Code's sanitizeToolNameForProvider over UTF-16 code units: every unit
// outside [A-Za-z0-9_-] becomes '_' (an emoji, two units, becomes "__"); "tool_" is prefixed when the
// result does not start with an ASCII letter. No hash, no length cap. The result is ASCII.
func SanitizeUnits(u []uint16) string {
	b := substitute(u, isProviderChar)
	if len(u) == 0 || u[0] > 0x7f || !isLetter(byte(u[0])) {
		return fallbackPrefix + string(b)
	}
	return string(b)
}

// Normalize is Qwen Code's normalizeToolNameForProvider, the registered name of a tool whose raw
// identity is name:
//   - a provider-safe name (IsProviderSafe) is returned unchanged, byte for byte;
//   - otherwise Sanitize(name), cut to 55 units, plus "_" + Hash(name) (the hash of the ORIGINAL
//     units, so "foo.bar" and "foo_bar" never collide). The result is at most 63 units,
//     provider-safe and ASCII.
//
// Normalize is idempotent: Normalize(Normalize(x)) == Normalize(x).
func Normalize(name string) string {
	if IsProviderSafe(name) {
		return name
	}
	return normalizeMemo.get(name, func(n string) string { return normalizeUnsafe(Units(n)) })
}

// NormalizeUnits is Normalize over UTF-16 code units (exact for lone surrogates).
func NormalizeUnits(u []uint16) string {
	if IsProviderSafeUnits(u) {
		return asciiString(u)
	}
	return normalizeUnsafe(u)
}

func normalizeUnsafe(u []uint16) string {
	suffix := "_" + HashText(FNV1a32(u))
	body := SanitizeUnits(u)
	if room := MaxLength - len(suffix); len(body) > room {
		body = body[:room]
	}
	return body + suffix
}

// NormalizeMcp is Qwen Code's normalizeMcpToolName: Normalize(name) when name starts with
// "mcp__", else name unchanged. Qwen Code 0.24.4 applies it to every function-call name of a
// restored history before sending it to a strict provider.
func NormalizeMcp(name string) string {
	if !HasPrefix(name) {
		return name
	}
	return Normalize(name)
}

// NormalizeMcpUnits is NormalizeMcp over UTF-16 code units.
func NormalizeMcpUnits(u []uint16) string {
	if !HasPrefixUnits(u) {
		return String(u)
	}
	return NormalizeUnits(u)
}

// Legacy is Qwen Code's generateLegacyMcpToolName, the name versions before the provider-safe
// change registered: every unit outside [A-Za-z0-9_.-] becomes '_' (dots are kept); a result
// longer than 63 units is middle-truncated to first 28 + "___" + last 32 (exactly 63).
func Legacy(name string) string {
	return legacyMemo.get(name, func(n string) string { return LegacyUnits(Units(n)) })
}

// LegacyUnits is Legacy over UTF-16 code units.
func LegacyUnits(u []uint16) string {
	b := substitute(u, isLegacyChar)
	if len(b) > MaxLength {
		out := make([]byte, 0, MaxLength)
		out = append(out, b[:LegacyHeadLength]...)
		out = append(out, LegacyJoiner...)
		out = append(out, b[len(b)-LegacyTailLength:]...)
		b = out
	}
	return string(b)
}

// LegacySubstitute is L(x) of qwen-reference.md §0: Legacy's character substitution without the
// truncation (length-preserving).
func LegacySubstitute(name string) string {
	return legacySubMemo.get(name, func(n string) string { return string(substitute(Units(n), isLegacyChar)) })
}

// ProviderSubstitute is P(x) of qwen-reference.md §0: every unit outside [A-Za-z0-9_-] becomes '_'
// (length-preserving, no "tool_" prefix).
func ProviderSubstitute(name string) string {
	return providerSubMemo.get(name, func(n string) string { return string(substitute(Units(n), isProviderChar)) })
}

// substitute maps each UTF-16 unit to itself when keep says so (keep only accepts ASCII) and
// to '_' otherwise: one output byte per unit.
func substitute(u []uint16, keep func(uint16) bool) []byte {
	b := make([]byte, len(u))
	for i, c := range u {
		if keep(c) {
			b[i] = byte(c)
		} else {
			b[i] = '_'
		}
	}
	return b
}

// Raw builds the raw identity "mcp__<server>__<tool>" from a configured server key and the tool
// name the server lists in tools/list.
func Raw(server, tool string) string { return Prefix + server + "__" + tool }

// HasPrefix reports whether name starts with "mcp__".
func HasPrefix(name string) bool { return len(name) >= len(Prefix) && name[:len(Prefix)] == Prefix }

// HasPrefixUnits is HasPrefix over UTF-16 code units.
func HasPrefixUnits(u []uint16) bool {
	if len(u) < len(Prefix) {
		return false
	}
	for i := 0; i < len(Prefix); i++ {
		if u[i] != uint16(Prefix[i]) {
			return false
		}
	}
	return true
}

// Len returns the length of s in UTF-16 code units (JavaScript's s.length).
func Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

func isLetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

func isProviderChar(c uint16) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-'
}

func isLegacyChar(c uint16) bool { return isProviderChar(c) || c == '.' }

// asciiString converts units known to be ASCII.
func asciiString(u []uint16) string {
	b := make([]byte, len(u))
	for i, c := range u {
		b[i] = byte(c)
	}
	return string(b)
}
