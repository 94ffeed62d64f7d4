package permission

import (
	"slices"
	"strings"
)

// Functions only the tests call (moved out of the production code).

// Priority is Qwen Code's decision priority (higher = more restrictive): deny 3, ask 2,
// default 1, allow 0; an unknown decision counts as default.
func (d Decision) Priority() int {
	switch d {
	case DecisionDeny:
		return 3
	case DecisionAsk:
		return 2
	case DecisionAllow:
		return 0
	}
	return 1
}

// Allows is Qwen Code's mcp-client isEnabled for the raw tool name the server lists
// (qwen-reference.md §2.7): a tool without a name is never enabled; an exact Exclude entry
// wins; otherwise, when Include is set, some entry must equal name or start with name + "("
// (as in "tool(args)").
func (f ToolFilter) Allows(name string) bool {
	if name == "" {
		return false
	}
	if slices.Contains(f.Exclude, name) {
		return false
	}
	if f.Include == nil {
		return true
	}
	for _, e := range f.Include {
		if e == name || strings.HasPrefix(e, name+"(") {
			return true
		}
	}
	return false
}

// ServerEnabled reports whether the server key passes mcp.allowed and mcp.excluded: not
// matched by any excluded pattern and, when allowed is set (non-nil), matched by one of its
// patterns. Callers replicating the CLI flag --allowed-mcp-server-names pass the flag list as
// allowed and nil as excluded (the flag replaces the setting and disables excluded).
func ServerEnabled(key string, allowed, excluded []string) bool {
	if MatchesAnyServerPattern(key, excluded) {
		return false
	}
	return allowed == nil || MatchesAnyServerPattern(key, allowed)
}
