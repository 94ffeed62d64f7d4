package qwen

import (
	"strings"

	"github.com/sessionfix/sessionfix/agent/qwen/settings"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/permission"
)

// LegacyMatch is audit.md §2's "before" predicate: whether the rule tool name pattern matched a
// tool registered under its legacy name legacy (mcpname.Legacy of the raw identity) with the
// matcher of Qwen Code versions before the provider-safe rename (pre-PR #12531
// matchesMcpPattern: plain string comparisons, no aliases, no identity):
//
//   - pattern == legacy; or
//   - pattern ends in "*", the prefix before it is not empty and legacy starts with it; or
//   - pattern == "mcp__" + s and legacy split on "__" has s as its second field.
func LegacyMatch(pattern, legacy string) bool {
	if pattern == legacy {
		return true
	}
	if prefix, ok := strings.CutSuffix(pattern, "*"); ok {
		return prefix != "" && strings.HasPrefix(legacy, prefix)
	}
	if s, ok := strings.CutPrefix(pattern, mcpname.Prefix); ok {
		parts := strings.Split(legacy, "__")
		return len(parts) >= 2 && parts[1] == s
	}
	return false
}

// legacyRuleMatch applies LegacyMatch to a permission rule as parseRule reads it: an invalid
// rule or one with a specifier never matched an MCP tool; the pattern is the rule's tool name.
func legacyRuleMatch(text, legacy string) bool {
	r := permission.ParseRule(text)
	if r.Invalid || r.Specifier != "" || len(r.ParamMatchers) > 0 {
		return false
	}
	return LegacyMatch(r.ToolName, legacy)
}

// before returns the "before" value of one rule entry for tool t.
func before(r settings.Rule, t *Tool, now permission.Match) permission.Match {
	var ok bool
	switch r.Kind {
	case settings.KindAllow, settings.KindAsk, settings.KindDeny:
		ok = legacyRuleMatch(r.Expanded, t.Legacy)
	case settings.KindDisallowed:
		ok = LegacyMatch(strings.TrimSpace(r.Expanded), t.Legacy)
	case settings.KindDisabled:
		ok = r.Expanded == t.Legacy
	default:
		// includeTools, excludeTools, mcp.allowed/excluded: raw names and server keys, which
		// the rename does not change.
		return now
	}
	if ok {
		return permission.Matched
	}
	return permission.NoMatch
}
