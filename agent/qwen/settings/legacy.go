package settings

import (
	"strings"

	"github.com/sessionfix/sessionfix/mcpname"
)

// LegacyReason says why an entry is in a legacy spelling.
type LegacyReason string

// Legacy reasons.
const (
	// LegacyUnsafe: the tool name of the rule starts with "mcp__" and is not provider-safe
	// (a dot, another character outside [A-Za-z0-9_-], or over 63 UTF-16 units): only
	// pre-0.2x Qwen Code registered such names.
	LegacyUnsafe LegacyReason = "not-provider-safe"
	// LegacyOfKnown: the tool name is provider-safe but equals Legacy(raw) ≠ Normalize(raw)
	// for a raw identity of the given index (e.g. mcp__lit__get_data for mcp__lit__get+data),
	// and is not itself the registered name of a known tool.
	LegacyOfKnown LegacyReason = "legacy-of-known-tool"
)

// LegacyRule is an entry written in a legacy spelling, for scan to report.
type LegacyRule struct {
	Rule Rule `json:"rule"`
	// Name is the tool-name part that was tested: the rule trimmed, without a "(…)"
	// specifier and without a trailing "*" wildcard.
	Name   string       `json:"name"`
	Reason LegacyReason `json:"reason"`
	// Owners are the known raw identities whose legacy spelling is Name (sorted; empty
	// without an index or when none matches).
	Owners []string `json:"owners,omitempty"`
	// Registered are the current names: Normalize(owner) for each owner, else
	// NormalizeMcp(Name) (what Qwen Code 0.24.4 would send for that name). Empty for a
	// pattern (a trailing "*", or a server-level "mcp__<server>" rule), which names no
	// single tool.
	Registered []string `json:"registered,omitempty"`
	// VarDependent: the rule uses $VAR / ${VAR}, so its current name would be computed from
	// the variables' values (possibly secrets) and Registered is left empty; Name then holds
	// expanded text and must not be printed either (issue 9 item 9).
	VarDependent bool `json:"var_dependent,omitempty"`
}

// legacyKinds are the lists whose entries are qualified tool names or rules. includeTools /
// excludeTools hold raw tool names (never normalized), mcp.allowed/excluded hold server
// keys and tools.core holds built-in names: none of them can be "legacy".
var legacyKinds = map[Kind]bool{KindAllow: true, KindAsk: true, KindDeny: true, KindDisabled: true, KindDisallowed: true}

// RuleToolName returns the tool-name part of a rule as parseRule reads it
// (qwen-reference.md §2.3): the trimmed rule up to "(" (trimmed again), without a trailing
// "*" (the MCP prefix wildcard).
func RuleToolName(rule string) string {
	s := strings.TrimSpace(rule)
	if i := strings.IndexByte(s, '('); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	return strings.TrimSuffix(s, "*")
}

// LegacyRules returns the entries of rules (allow, ask, deny, disabled and disallowed kinds)
// whose tool name is in a legacy spelling, in input order. ix may be nil: then only
// LegacyUnsafe entries can be found. Ignored entries are included (scan reports them too).
func LegacyRules(rules []Rule, ix *mcpname.Index) []LegacyRule {
	var out []LegacyRule
	for _, r := range rules {
		if !legacyKinds[r.Kind] {
			continue
		}
		name := RuleToolName(r.Expanded)
		if !mcpname.HasPrefix(name) {
			continue
		}
		owners := legacyOwners(name, ix)
		lr := LegacyRule{Rule: r, Name: name, Owners: owners}
		switch {
		case !mcpname.IsProviderSafe(name):
			lr.Reason = LegacyUnsafe
		case len(owners) > 0 && len(ix.RegisteredBy(name)) == 0:
			lr.Reason = LegacyOfKnown
		default:
			continue
		}
		switch {
		case r.Expanded != r.Literal && len(owners) == 0:
			lr.VarDependent = true
		case isSingleTool(r.Expanded, name):
			lr.Registered = registered(name, owners)
		}
		out = append(out, lr)
	}
	return out
}

// legacyOwners returns the known raw identities whose legacy spelling is name and differs
// from their registered name.
func legacyOwners(name string, ix *mcpname.Index) []string {
	var owners []string
	for _, raw := range ix.LegacyOf(name) {
		if mcpname.Normalize(raw) != name {
			owners = append(owners, raw)
		}
	}
	return owners
}

// isSingleTool reports whether a rule names one tool: no trailing wildcard and a
// "mcp__<server>__<tool>" shape.
func isSingleTool(rule, name string) bool {
	s := strings.TrimSpace(rule)
	if i := strings.IndexByte(s, '('); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	return !strings.HasSuffix(s, "*") && strings.Contains(name[len(mcpname.Prefix):], "__")
}

func registered(name string, owners []string) []string {
	if len(owners) == 0 {
		return []string{mcpname.NormalizeMcp(name)}
	}
	out := make([]string, len(owners))
	for i, o := range owners {
		out[i] = mcpname.Normalize(o)
	}
	return out
}
