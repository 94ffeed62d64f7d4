package permission

import (
	"slices"
	"strings"

	"github.com/sessionfix/sessionfix/mcpname"
)

// Context is what a caller tells the permission layer about one tool call (Qwen Code
// PermissionCheckContext, MCP fields only): the registered name, the tool's
// permissionAliases and, when known, its producer identity. A nil Identity is an
// "identity-less" caller; nil Aliases is a caller without the alias channel. Both lose
// coverage for some rules (qwen-reference.md §2.6 bullet 10), which is why Tool.Context
// exists.
type Context struct {
	ToolName string
	Aliases  []string
	Identity *Identity
}

// seg is SEG(x) of qwen-reference.md §0: the raw, provider-substituted (P) and
// legacy-substituted (L) spellings of a server key or tool segment, in that order.
func seg(x string) [3]string {
	return [3]string{x, mcpname.ProviderSubstitute(x), mcpname.LegacySubstitute(x)}
}

// partCount is count(split(s, "__")) with JavaScript split semantics (= strings.Split).
func partCount(s string) int { return strings.Count(s, "__") + 1 }

// isExactEntry reports whether pattern is an exact tool entry: no trailing "*" and at least
// three "__"-separated parts (mcp, server, tool).
func isExactEntry(pattern string) bool {
	return !strings.HasSuffix(pattern, "*") && partCount(pattern) >= 3
}

// ResolveRawMcpIdentity is Qwen Code's resolveRawMcpIdentity (qwen-reference.md §2.4): the
// first alias whose own normalization (mcpname.NormalizeMcp) is toolName, i.e. the tool's raw
// identity; "" when no alias qualifies. A hash is never trusted beyond that equality.
func ResolveRawMcpIdentity(toolName string, aliases []string) string {
	for _, a := range aliases {
		if mcpname.NormalizeMcp(a) == toolName {
			return a
		}
	}
	return ""
}

// ResolveLegacyMcpSpelling is Qwen Code's resolveLegacyMcpSpelling (qwen-reference.md §2.4):
// mcpname.Legacy(raw) when raw starts with "mcp__", differs from its legacy name and that
// legacy name is PUBLISHED in aliases (so it vouched for its server); "" otherwise.
func ResolveLegacyMcpSpelling(raw string, aliases []string) string {
	if raw == "" || !mcpname.HasPrefix(raw) {
		return ""
	}
	l := mcpname.Legacy(raw)
	if l == raw {
		return ""
	}
	if slices.Contains(aliases, l) {
		return l
	}
	return ""
}

// MatchesMcpPattern is Qwen Code's matchesMcpPattern (rule-parser.ts, qwen-reference.md §2.4,
// steps 1–8): does the MCP rule pattern name the tool registered as toolName? raw is the
// tool's raw identity ("" = unknown), aliases its permissionAliases (used to find the
// published legacy spelling), id its producer identity (nil = unknown).
//
// Comparisons are literal: the exact registered name; an exact 3-part entry equal to raw;
// a trailing-"*" prefix against the registered, raw and (published) legacy spellings, cut at
// the producer's server boundary when id is known; a bare "mcp__<server>" against the
// producer's key spellings (with id) or the second "__" field of a spelling (without).
// A bare "*" never matches. Strings are compared bytewise, which for valid UTF-8 agrees with
// JavaScript's UTF-16 prefix and equality tests.
func MatchesMcpPattern(pattern, toolName, raw string, aliases []string, id *Identity) bool {
	// 1. exact registered name
	if pattern == toolName {
		return true
	}
	// 2. exact raw identity
	if isExactEntry(pattern) && raw != "" && pattern == raw {
		return true
	}
	// 3. spellings
	spellings := []string{toolName}
	if raw != "" && raw != toolName {
		spellings = append(spellings, raw)
	}
	leg := ResolveLegacyMcpSpelling(raw, aliases)
	if leg != "" && !slices.Contains(spellings, leg) {
		spellings = append(spellings, leg)
	}
	// 4. prefix spellings: the untruncated legacy rendering replaces the published alias
	prefixSpellings := spellings
	if leg != "" && raw != "" {
		prefixSpellings = []string{toolName, raw, mcpname.LegacySubstitute(raw)}
	}
	litPrefix := func(p string) bool {
		for _, s := range prefixSpellings {
			if strings.HasPrefix(s, p) {
				return true
			}
		}
		return false
	}
	// 5. wildcard
	if prefix, ok := strings.CutSuffix(pattern, "*"); ok {
		if prefix == "" {
			return false // bare "*" never matches an MCP tool
		}
		if id == nil {
			return litPrefix(prefix)
		}
		serverSeg := seg(id.Server)
		boundary, found := "", false
		for _, x := range serverSeg {
			if b := mcpname.Prefix + x + "__"; strings.HasPrefix(prefix, b) {
				boundary, found = b, true
				break
			}
		}
		if !found {
			namesThisKey := false
			for _, x := range serverSeg {
				if strings.HasPrefix(mcpname.Prefix+x, prefix) {
					namesThisKey = true
					break
				}
			}
			return namesThisKey && litPrefix(prefix)
		}
		toolPrefix := prefix[len(boundary):]
		if toolPrefix == "" {
			return true
		}
		regB := mcpname.Prefix + mcpname.ProviderSubstitute(id.Server) + "__"
		if regSeg, ok := strings.CutPrefix(toolName, regB); ok && strings.HasPrefix(regSeg, toolPrefix) {
			return true
		} else if !ok {
			if regSeg, ok := strings.CutPrefix(toolName, boundary); ok && strings.HasPrefix(regSeg, toolPrefix) {
				return true
			}
		}
		for _, x := range seg(id.Tool) {
			if strings.HasPrefix(x, toolPrefix) {
				return true
			}
		}
		return false
	}
	// 6. whole-server rule at the producer boundary
	if id != nil {
		for _, x := range seg(id.Server) {
			if pattern == mcpname.Prefix+x {
				return true
			}
		}
		return false
	}
	// 7. whole-server rule without identity: second "__" field of a spelling
	parts := strings.Split(pattern, "__")
	if len(parts) == 2 && parts[0] == "mcp" {
		for _, s := range spellings {
			sp := strings.Split(s, "__")
			if len(sp) >= 3 && sp[0] == "mcp" && sp[1] == parts[1] {
				return true
			}
		}
	}
	// 8.
	return false
}

// MatchesMcpName is Qwen Code's matchesMcpName, the GRANT-side predicate (qwen-reference.md
// §2.4): MatchesMcpPattern with the raw identity recovered from aliases
// (ResolveRawMcpIdentity), or an exact 3-part entry equal to the published legacy spelling.
// Allow rules use it (then the registry guard, HasAmbiguousMcpGrant); restrictive rules
// use MatchesToolPattern.
func MatchesMcpName(pattern, toolName string, aliases []string, id *Identity) bool {
	raw := ResolveRawMcpIdentity(toolName, aliases)
	if MatchesMcpPattern(pattern, toolName, raw, aliases, id) {
		return true
	}
	if !isExactEntry(pattern) {
		return false
	}
	leg := ResolveLegacyMcpSpelling(raw, aliases)
	return leg != "" && pattern == leg
}

// MatchesRestrictiveMcpName is Qwen Code's matchesRestrictiveMcpName (qwen-reference.md
// §2.4): the extra coverage deny, ask and disallowedTools get from the producer identity
// (false when id is nil). It first retries MatchesMcpName with UNGATED producer-derived
// aliases [raw, Legacy(raw)] (the truncated legacy spelling always included); then, for a
// "mcp__…*" prefix, matches when the prefix is a literal prefix of the registered name
// (without overrunning the provider-safe server boundary into another key), or stops at or
// inside this key's own "__" separator in any SEG spelling. Allow rules never use it.
func MatchesRestrictiveMcpName(pattern, toolName string, id *Identity) bool {
	if id == nil {
		return false
	}
	raw := id.Raw()
	if MatchesMcpName(pattern, toolName, []string{raw, mcpname.Legacy(raw)}, id) {
		return true
	}
	if !mcpname.HasPrefix(pattern) || !strings.HasSuffix(pattern, "*") {
		return false
	}
	prefix := pattern[:len(pattern)-1]
	regB := mcpname.Prefix + mcpname.ProviderSubstitute(id.Server) + "__"
	if strings.HasPrefix(toolName, prefix) && (!strings.HasPrefix(toolName, regB) || strings.HasPrefix(prefix, regB)) {
		return true
	}
	for _, x := range seg(id.Server) {
		if strings.HasPrefix(mcpname.Prefix+x+"__", prefix) {
			return true
		}
	}
	return false
}

// MatchesToolPattern is Qwen Code's matchesToolPattern, the blocklist predicate used by
// subagent disallowedTools (matchesAgentToolBlocklist) and by deny/ask rules against MCP
// tools (qwen-reference.md §2.4): for a non-MCP toolName an exact comparison; for an MCP tool
// MatchesMcpName or MatchesRestrictiveMcpName.
func MatchesToolPattern(pattern, toolName string, aliases []string, id *Identity) bool {
	if !mcpname.HasPrefix(toolName) {
		return pattern == toolName
	}
	return MatchesMcpName(pattern, toolName, aliases, id) || MatchesRestrictiveMcpName(pattern, toolName, id)
}

// MatchesAgentToolBlocklist is Qwen Code's matchesAgentToolBlocklist: whether any entry of a
// subagent's disallowedTools hides the tool (MatchesToolPattern on each raw entry).
func MatchesAgentToolBlocklist(entries []string, ctx Context) bool {
	for _, p := range entries {
		if MatchesToolPattern(p, ctx.ToolName, ctx.Aliases, ctx.Identity) {
			return true
		}
	}
	return false
}

// MatchesRule is Qwen Code's unified matchesRule (rule-parser.ts, qwen-reference.md §2.4) for
// one parsed rule and a call context. restrictive is true for deny and ask rules.
//
// The MCP branch is taken when the rule's tool name or the context's tool name starts with
// "mcp__" (so "m*" and "mcp*" reach MCP tools, and "mcp__github" is refused for a non-MCP
// "x__github__deploy"). There, restrictive rules against an MCP tool use MatchesToolPattern
// and everything else MatchesMcpName; a rule with a specifier never matches.
//
// Simplification for non-MCP tools (documented, not needed for MCP): the rule matches when
// its canonical tool name covers the tool (exact name or the Read/Edit/Bash meta-categories)
// and it has neither a specifier nor param matchers; since Context carries no tool
// parameters, a rule with a specifier or param matchers never matches. Qwen Code would match
// the specifier against the command, path, domain or literal argument.
func MatchesRule(rule Rule, ctx Context, restrictive bool) bool {
	if rule.Invalid {
		return false
	}
	name := ResolveToolName(ctx.ToolName)
	if mcpname.HasPrefix(rule.ToolName) || mcpname.HasPrefix(name) {
		var ok bool
		if restrictive && mcpname.HasPrefix(name) {
			ok = MatchesToolPattern(rule.ToolName, name, ctx.Aliases, ctx.Identity)
		} else {
			ok = MatchesMcpName(rule.ToolName, name, ctx.Aliases, ctx.Identity)
		}
		// MCP rules cannot carry specifiers; param matchers are never set for MCP rule names
		// and need tool parameters, which Context does not model.
		return ok && rule.Specifier == "" && len(rule.ParamMatchers) == 0
	}
	if !toolMatchesRuleToolName(rule.ToolName, name) {
		return false
	}
	return rule.Specifier == "" && len(rule.ParamMatchers) == 0
}
