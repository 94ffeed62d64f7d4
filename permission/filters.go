package permission

import (
	"slices"
	"strings"

	"github.com/sessionfix/sessionfix/mcpname"
)

// IsToolDisabled is Qwen Code's ToolRegistry.isToolDisabled (qwen-reference.md §2.7): whether
// the tools.disabled entries (exact strings from settings) keep the tool registered as name
// out of the registry. disabledAliases are the tool's ungated DisabledToolAliases. It is
// true when an entry equals name or one of the aliases, or, for an "mcp__" name, when an
// entry normalizes (mcpname.NormalizeMcp) to name — so a legacy-spelled entry still disables
// the tool, fail-closed (it may also disable a colliding server's tool). No rule parsing,
// no wildcards.
func IsToolDisabled(disabledEntries []string, name string, disabledAliases []string) bool {
	for _, e := range disabledEntries {
		if e == name || slices.Contains(disabledAliases, e) {
			return true
		}
	}
	if !mcpname.HasPrefix(name) {
		return false
	}
	for _, e := range disabledEntries {
		if mcpname.NormalizeMcp(e) == name {
			return true
		}
	}
	return false
}

// ToolFilter is one server's mcpServers.<key>.includeTools / excludeTools pair. Include nil
// means "not set" (every tool passes); a non-nil empty Include lets no tool through, as in
// Qwen Code where an empty array is set but matches nothing. Decoding JSON gives exactly
// that: absent → nil, [] → empty.
type ToolFilter struct {
	Include []string
	Exclude []string
}

// MatchesServerPattern is Qwen Code's matchesServerPattern for mcp.allowed / mcp.excluded
// (qwen-reference.md §2.7): a pattern without "*" or "?" is compared exactly; otherwise "*"
// matches any run of UTF-16 units (empty included) and "?" exactly one unit. The whole name
// must match. Iterative with single-star backtracking, no regular expressions.
func MatchesServerPattern(name, pattern string) bool {
	if !strings.ContainsAny(pattern, "*?") {
		return name == pattern
	}
	n, p := mcpname.Units(name), mcpname.Units(pattern)
	ni, pi, starN, starP := 0, 0, -1, -1
	for ni < len(n) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == n[ni]):
			ni++
			pi++
		case pi < len(p) && p[pi] == '*':
			starP, starN = pi, ni
			pi++
		case starP != -1:
			pi = starP + 1
			starN++
			ni = starN
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// MatchesAnyServerPattern reports whether name matches any pattern (false for an empty or
// nil list).
func MatchesAnyServerPattern(name string, patterns []string) bool {
	for _, p := range patterns {
		if MatchesServerPattern(name, p) {
			return true
		}
	}
	return false
}
