// Qwen Code's permission-rule audit (audit.md §1–§4) on the shared rule-audit layer (package
// permission/rules; the engine, package audit, evaluates, orders and writes every format):
// Load reads the inputs (settings scopes, subagent files, the inventory: a file, --discover
// through the injected Hooks.ListTools, or inferred from the settings and the stored names)
// into a Loaded; Run is the pure evaluation of every tool's decision now and before, from an
// Input of merged settings (settings.Merged), subagent files (settings.Agent) and an
// mcpinventory.Inventory, and Report.NowMatch / BeforeMatch of every (rule, tool) pair;
// LegacyMatch is audit.md §2's "matched before" (the pre-rename matcher on the tool's legacy
// spelling). Report.RuleAudit hands all of it to the engine as a rules.Audit (audit.go: the
// two points as rules.Semantics, the rules and tools, and qwenLayout, the shape of the reports:
// PairColumns/ToolColumns, the CSV tables' column contract, the JSON members, the page's and
// SARIF's words). Run and RuleAudit do no I/O: no files, no clock, no environment, no network.
//
// # What "now" and "before" mean, per list
//
// now follows Qwen Code's final matching (qwen-reference.md §2, package permission) with the
// producer context a real call carries (registered name, permissionAliases, identity) and the
// live registry of every registered inventory tool:
//
//	permissions.allow, tools.allowed   grant predicate, then the registry ambiguity guard:
//	                                   match, refused or no
//	permissions.ask, permissions.deny,
//	tools.exclude, disallowedTools     restrictive predicate (MatchesToolPattern)
//	tools.disabled                     IsToolDisabled with the ungated disabledToolAliases
//	mcpServers.<key>.includeTools      the raw tool name of that server's tools: entry == name
//	                                   or entry starts with name + "("
//	mcpServers.<key>.excludeTools      the raw tool name of that server's tools, exact
//	mcp.allowed, mcp.excluded          server-key glob (MatchesServerPattern)
//
// before is audit.md §2's definition for the rule lists (LegacyMatch on the tool's legacy name,
// for allow, ask, deny and disallowedTools; allow rules were never refused then); a
// tools.disabled entry matched before when it equals the legacy name; includeTools,
// excludeTools and mcp.allowed/excluded compare raw names and server keys, which the rename
// does not touch, so before equals now. tools.core is not a rule list (a hard allowlist of
// built-in tools; MCP tools are exempt) and is left out.
//
// # Decisions
//
// A tool's decision now is, in Qwen Code's layer order (qwen-reference.md §2.2): excluded
// (mcp.allowed/excluded, includeTools/excludeTools: the tool is never discovered), disabled
// (tools.disabled), disallowed (only when the decisions describe calls made by a subagent:
// its disallowedTools), then permission.Evaluate's deny / ask / allow / default. The outcome
// in the chosen approval mode (default: "default") is permission.Decide's verdict: block, ask
// or ran. The decision before is the same layering with every match replaced by its "before"
// value, no registry guard, and the same trust and mode.
//
// Interpretations (documented, not in audit.md §2): a tool removed at registration (excluded or
// disabled) is not in the live registry other tools' grants are checked against, as in Qwen
// Code; a denied tool stays registered. A server declared only in a subagent's own
// mcpServers (and not in the settings' mcpServers) is agent-local: its tools are not in the
// session registry (qwen-reference.md §2.6, R26-1). A server's trust comes from the effective
// settings when it is configured there, else from the inventory. Folder trust
// (security.folderTrust, trustedFolders.json) is not evaluated: trust is taken as configured.

package qwen
