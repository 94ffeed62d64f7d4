// Package settings reads Qwen Code settings files and subagent front matter and reports every
// rule-like entry with its exact origin (file, scope, key, index, byte offset, line:column).
//
// It owns, per stores.md §2 and qwen-reference.md §4.6, §2.1, §2.7:
//
//   - Discover: the scopes Qwen Code loads (system defaults, user, workspace, system) plus
//     explicit --settings files, computed from injected environment and home directory.
//   - Load / Parse: one settings file (JSON with // and /* */ comments) into a File: the rule
//     lists (permissions.allow|ask|deny, tools.allowed|exclude|disabled|core, mcp.allowed|
//     excluded, mcpServers.<key>.includeTools|excludeTools, and the v1 flat keys Qwen Code
//     migrates), the mcpServers map, $version, tools.approvalMode and
//     security.folderTrust.enabled. Every string is also $VAR / ${VAR} expanded as Qwen Code
//     does when it loads a file; both spellings are kept.
//   - LoadAgent / LoadAgentsDir: .qwen/agents/*.md YAML front matter (name, disallowedTools,
//     agent-local mcpServers names).
//   - Merge: the per-key merge strategies of Qwen Code's settings loader, keeping every origin.
//   - LegacyRules: the entries still written in a legacy (pre provider-safe) spelling.
//
// # Parsing decisions
//
// Qwen Code strips comments with strip-json-comments and then calls JSON.parse. JSON.parse
// rejects trailing commas and a UTF-8 byte order mark, and Qwen Code then sets the file aside
// (".corrupted") and runs with empty settings: none of the file's rules are in effect. This
// package therefore reports a trailing comma (ErrTrailingComma), a BOM (ErrByteOrderMark),
// any other syntax error (ErrSyntax) and a top-level value that is not an object
// (ErrNotObject) as a *ParseError with the file, line and column, instead of guessing what
// the user meant. The caller reports it and goes on with the other files. Duplicate object
// keys follow JSON.parse (the last one wins) and produce a Warning.
//
// Lines and columns are 1-based; columns count bytes (as Go tools do), so a CJK character
// before the position counts 3.
//
// Known divergences, all on files no user writes by hand: the JWCC parser rejects invalid
// UTF-8 and U+2028/U+2029 inside comments, which strip-json-comments lets through. Subagent
// front matter with a YAML syntax error is reported, where Qwen Code may still load it
// through its lenient line-based fallback parser.
//
// # Secrets
//
// Settings hold API keys, MCP env and headers, and MCP args may carry tokens. API keys and
// the top-level "env" are not read at all; MCP env, header and arg values are kept only as
// Secret, whose every printed form is a fixed placeholder; nothing in this package puts a
// secret value into an error or a Warning. Expanded strings (Rule.Expanded,
// MCPServer.Command, Cwd, URL) contain the values of the environment variables a file
// references, as Qwen Code sees them: reports print Rule.Literal.
package settings
