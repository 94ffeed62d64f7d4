package settings

import (
	"fmt"

	"github.com/sessionfix/sessionfix/mcpconfig"
)

// Kind says how Qwen Code uses a list entry, i.e. which matching applies to it
// (stores.md §2 table; qwen-reference.md §2.7).
type Kind string

// The kinds of list entries.
const (
	// KindAllow: permission rules granting a tool (permissions.allow, tools.allowed,
	// v1 allowedTools). Grant predicate plus the registry ambiguity guard.
	KindAllow Kind = "allow"
	// KindAsk: permissions.ask rules. Restrictive predicate.
	KindAsk Kind = "ask"
	// KindDeny: permissions.deny, tools.exclude, v1 excludeTools. Restrictive predicate.
	KindDeny Kind = "deny"
	// KindDisabled: tools.disabled entries. Exact registered name or alias, plus
	// normalizeMcpToolName(entry) == name (ToolRegistry.isToolDisabled).
	KindDisabled Kind = "disabled"
	// KindCore: tools.core / v1 coreTools. Hard allowlist of built-in core tools; MCP tools
	// are exempt. Not a rule list.
	KindCore Kind = "core"
	// KindIncludeTools: mcpServers.<key>.includeTools. Raw MCP tool names (entry == name or
	// entry starts with name + "("). Never normalized.
	KindIncludeTools Kind = "include-tools"
	// KindExcludeTools: mcpServers.<key>.excludeTools. Raw MCP tool names, exact.
	KindExcludeTools Kind = "exclude-tools"
	// KindMCPAllowed: mcp.allowed / v1 allowMCPServers. Server-key globs (* and ?).
	KindMCPAllowed Kind = "mcp-allowed"
	// KindMCPExcluded: mcp.excluded / v1 excludeMCPServers. Server-key globs.
	KindMCPExcluded Kind = "mcp-excluded"
	// KindDisallowed: subagent front matter disallowedTools. Restrictive (blocklist).
	KindDisallowed Kind = "disallowed"
)

// Origin locates one value in one file.
type Origin struct {
	// File is the path as given to Load (not made absolute).
	File  string `json:"file"`
	Scope Scope  `json:"scope"`
	// Key is the key path as spelled in the file: "permissions.allow", "tools.exclude",
	// "allowedTools" (v1), "mcpServers.<server key>.includeTools", "disallowedTools", ….
	Key string `json:"key"`
	// Index is the 0-based position in the JSON array (or YAML sequence, or comma list of a
	// front matter string); -1 when the origin is not a list entry.
	Index int `json:"index"`
	// Offset and End delimit the value's bytes in the file, quotes included: data[Offset:End]
	// is the JSON string token to replace for a byte-exact edit. For front matter, they
	// delimit the YAML scalar.
	Offset int `json:"offset"`
	End    int `json:"end"`
	// Line and Column (1-based, Column in bytes) of Offset.
	Line   int `json:"line"`
	Column int `json:"column"`
}

// String returns "file:line:col key[index]" (without "[index]" when Index < 0).
func (o Origin) String() string {
	if o.Index < 0 {
		return fmt.Sprintf("%s:%d:%d %s", o.File, o.Line, o.Column, o.Key)
	}
	return fmt.Sprintf("%s:%d:%d %s[%d]", o.File, o.Line, o.Column, o.Key, o.Index)
}

// Rule is one string entry of a rule-like list, with its origin.
type Rule struct {
	Origin
	Kind Kind `json:"kind"`
	// Server is the configured server key for KindIncludeTools / KindExcludeTools.
	Server string `json:"server,omitempty"`
	// Literal is the string as written in the file (JSON unescaped). Print this one.
	Literal string `json:"literal"`
	// Expanded is Literal after $VAR / ${VAR} expansion (Expand): what Qwen Code matches.
	// It may contain environment values; prefer Literal in reports.
	Expanded string `json:"expanded"`
	// V1 marks an entry of a v1 flat key (allowedTools, excludeTools, coreTools,
	// allowMCPServers, excludeMCPServers). Origin.Key keeps the real spelling.
	V1 bool `json:"v1,omitempty"`
	// Ignored is non-empty when Qwen Code does not use this entry, and says why (e.g. a v1
	// key in a file that already has a "$version"). Merge skips ignored entries.
	Ignored string `json:"ignored,omitempty"`
}

// String returns "file:line:col key[index] \"literal\"" (a Rule would otherwise print as
// its embedded Origin).
func (r Rule) String() string {
	return fmt.Sprintf("%s %q", r.Origin.String(), r.Literal)
}

// Transport is mcpconfig.Transport (mcp-client.ts createTransport: httpUrl and url without
// type "sse" are streamable HTTP in current Qwen Code; older releases treated a bare url as
// SSE).
type Transport = mcpconfig.Transport

// Transports.
const (
	TransportStdio = mcpconfig.TransportStdio
	TransportHTTP  = mcpconfig.TransportHTTP
	TransportSSE   = mcpconfig.TransportSSE
	// TransportNone: no command, httpUrl or url (e.g. a tcp server); cannot be discovered.
	TransportNone = mcpconfig.TransportNone
)

// MCPServer is one mcpServers entry of a settings file: the server as every agent's config
// describes it (mcpconfig.Server: expanded strings, secret Args, Env and Headers), where its
// key is, and Qwen Code's own per-server tool filters.
type MCPServer struct {
	mcpconfig.Server
	// Origin points at the server's key in the file (Key "mcpServers.<key>", Index -1).
	Origin       Origin `json:"origin"`
	IncludeTools []Rule `json:"includeTools,omitempty"`
	ExcludeTools []Rule `json:"excludeTools,omitempty"`
}

// Servers are the launch descriptions of ms (what --discover starts), in order.
func Servers(ms []MCPServer) []mcpconfig.Server {
	out := make([]mcpconfig.Server, len(ms))
	for i, m := range ms {
		out[i] = m.Server
	}
	return out
}

// File is one loaded settings file.
type File struct {
	Path  string `json:"path"`
	Scope Scope  `json:"scope"`
	// Version is the numeric "$version" when HasVersion.
	Version    int  `json:"version"`
	HasVersion bool `json:"hasVersion"`
	// V1 is true when the file has no numeric "$version" (or one below 2): Qwen Code migrates
	// its v1 flat keys, so their entries count. Otherwise v1 keys are ignored (Rule.Ignored).
	V1 bool `json:"v1"`
	// ApprovalMode is tools.approvalMode (or the v1 flat approvalMode), expanded; "" when
	// absent.
	ApprovalMode string `json:"approvalMode,omitempty"`
	// FolderTrust is security.folderTrust.enabled (or the v1 flat folderTrust); nil when
	// absent.
	FolderTrust *bool `json:"folderTrust,omitempty"`
	// Rules holds every string entry of every rule-like list, in file order (by Offset),
	// including mcpServers include/exclude lists and ignored entries.
	Rules []Rule `json:"rules"`
	// MCPServers in file order.
	MCPServers []MCPServer `json:"mcpServers"`
	// Lists holds the key path of every rule list present as an array in the file, even an
	// empty one ("tools.allowed", "allowedTools", …): an empty list still replaces a lower
	// scope's list for keys merged with REPLACE.
	Lists    []string  `json:"lists,omitempty"`
	Warnings []Warning `json:"warnings,omitempty"`
}

// RulesOf returns the rules of the given kinds (all rules when none is given), in file order.
func (f *File) RulesOf(kinds ...Kind) []Rule {
	return filterKinds(f.Rules, kinds)
}

func filterKinds(rules []Rule, kinds []Kind) []Rule {
	var out []Rule
	for _, r := range rules {
		if len(kinds) == 0 {
			out = append(out, r)
			continue
		}
		for _, k := range kinds {
			if r.Kind == k {
				out = append(out, r)
				break
			}
		}
	}
	return out
}
