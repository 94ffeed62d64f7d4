// Package permission holds Qwen Code's final MCP permission semantics (QwenLM/qwen-code PR
// #12531, "candidate E"; qwen-reference.md §1.6, §2 and §3) as pure functions over values:
// no I/O, no settings parsing, no clock.
//
// It owns:
//   - the producer side: Identity, Tool and NewTool (registered name, legacy name,
//     disabledToolAliases, gated permissionAliases, LegacyReductionVouchesForServer);
//   - the rule grammar: ParseRule, ResolveToolName;
//   - the matchers: MatchesMcpPattern, MatchesMcpName (grant), MatchesRestrictiveMcpName,
//     MatchesToolPattern (blocklist), MatchesRule;
//   - the registry ambiguity guard: HasAmbiguousMcpGrant, IsMcpAllowAmbiguous;
//   - evaluation: Rules, Evaluate (deny > ask > non-refused allow > default), RuleMatch;
//   - the other knobs: IsToolDisabled (tools.disabled), ToolFilter (includeTools /
//     excludeTools), MatchesServerPattern (mcp.allowed / mcp.excluded; the tests' reference
//     ServerEnabled and ToolFilter.Allows say the whole rule);
//   - the outcome of one call: DefaultPermission (trust), Decide (approval modes) giving
//     ran / ask / block.
//
// Conventions: a raw identity, alias or legacy spelling that is unknown is passed as "" and
// an unknown producer identity as a nil *Identity, where Qwen Code passes undefined. All
// string comparisons are prefix/equality tests on valid UTF-8, which agree with JavaScript's
// UTF-16 tests; lengths that matter (alias gating, the vouching window) count UTF-16 units
// through package mcpname. Lone surrogates cannot be represented and are out of scope.
//
// Simplified on purpose: non-MCP built-in rules match by canonical tool name (and the
// Read/Edit/Bash meta-categories) only; since a Context carries no tool parameters, a
// non-MCP rule with a specifier never matches (see MatchesRule). Shell compound-command
// passes are not modelled.
//
// The tables of qwen-reference.md §3.1 and §3.2 live in testdata/ as JSON so other packages
// (audit) can replay them.
package permission
