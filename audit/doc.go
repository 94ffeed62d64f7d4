// Package audit answers, for a user's settings and MCP tools, which permission rules match
// which tools after the provider-safe rename, which matched before it, and what each tool's
// decision is now and was then (audit.md §2).
//
// It owns:
//   - Run: the pure evaluation of every (rule, tool) pair and every tool's decision, from an
//     Input of merged settings (store/qwen/settings.Merged), subagent files (settings.Agent) and an
//     inventory (inventory.Inventory);
//   - LegacyMatch: audit.md §2's definition of "matched before" (the pre-rename matcher on the
//     tool's legacy spelling);
//   - the column contract of the CSV tables (PairColumns, ToolColumns) and their rows;
//   - the report documents built from a Report and what was read (Loaded): the JSON schema
//     (JSONReport), the HTML page, the SARIF results and rules (with their fingerprints);
//   - what every agent's audit shares: Rendering renders one format into memory through
//     package reports; ReadBaseline reads a --baseline (either audit's SARIF or JSON).
//
// Another agent's rule audit is a plug-in of its room (audit*.go in the agent's package under
// store/: its rule files, how a rule matches a tool now and before, its report and documents,
// its fix --rules migration); it builds its documents with package reports and hands them to
// Rendering. A room never imports audit.
//
// Load reads a Qwen Code audit's inputs (settings, subagents, inventory) into a Loaded. Run
// and the renderers do no I/O: no files, no clock (the caller passes the time), no
// environment, no network. The command layer parses the flags, prints, and writes the
// rendered bytes.
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
//
// # Imports
//
// audit imports mcpname, permission, the Qwen Code room whose audit it still holds (store/qwen,
// store/qwen/settings, store/agent for its environment), mcpinventory and mcpconfig (the
// inventory as data), internal/fileio (SameFile) and reports (the document formats). It must
// not import inventory (the MCP client: --discover's tools come through Hooks.ListTools), scan,
// rewrite, a storage engine or cmd: the stored names an inferred inventory needs come through
// Hooks.StoredNames.
// No other room: their audits are their plug-ins, and a room never imports audit.
package audit
