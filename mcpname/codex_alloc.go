package mcpname

import (
	"fmt"
	"slices"
	"strings"
)

// CodexParams are the knobs of the E4/E5/E6 allocator (schemes.md §A.4, parameter table). Use
// CodexParamsFor or the CodexE*Params presets rather than filling one by hand.
type CodexParams struct {
	// Max is MAX, the byte budget of namespace + Join + name: 64 (E4, E5) or 128 (E6). Names fit
	// only when Max >= CodexSuffixLen + len(Join) + 1.
	Max int
	// Join is what the model-visible string puts between namespace and name: "" in E4 (the
	// namespace carries the trailing "__") and "__" in E5/E6. Its byte length is RESERVED.
	Join string
	// LegacyNamespace selects E4's raw callable namespace "mcp__" + server + "__"
	// (normalize_codex_apps_callable_namespace); otherwise it is the server key (E5/E6).
	LegacyNamespace bool
	// AddPrefix prefixes "mcp__" to every namespace that does not already start with it (E5/E6
	// callable_namespace_with_prefix). It is Codex's prefix_mcp_tool_names(): true unless the
	// feature non_prefixed_mcp_tool_names is on; at 0.153.4 also true whenever
	// non_prefixed_mcp_tool_servers is set (schemes.md §A.8).
	AddPrefix bool
	// NonPrefixedServers are server keys exempt from AddPrefix (E6 config
	// non_prefixed_mcp_tool_servers), compared with CodexTool.Server byte for byte.
	NonPrefixedServers []string
}

// CodexE4Params is era E4/E4b (codex-rs/codex-mcp/src/mcp_tool_names.rs @ 52a0ab1, qualify_tools):
// namespace "mcp__<server>__", MAX 64, nothing reserved, no prefixing.
func CodexE4Params() CodexParams {
	return CodexParams{Max: 64, LegacyNamespace: true}
}

// CodexE5Params is era E5 (codex-rs/codex-mcp/src/tools.rs @ 00a35b1b,
// normalize_tools_for_model_with_prefix): namespace "mcp__<server>", MAX 64, the "__" join
// counted.
func CodexE5Params() CodexParams {
	return CodexParams{Max: 64, Join: CodexDelimiter, AddPrefix: true}
}

// CodexE6Params is era E6 (codex PR #39594, shipped between CLI 0.148.0 and 0.153.2; schemes.md
// §A.2 [2nd]): as E5 with MAX 128, and nonPrefixed the non_prefixed_mcp_tool_servers list.
func CodexE6Params(nonPrefixed ...string) CodexParams {
	return CodexParams{Max: ResponsesNameMax, Join: CodexDelimiter, AddPrefix: true,
		NonPrefixedServers: slices.Clone(nonPrefixed)}
}

// CodexParamsFor returns the preset of an allocator era: E4 and E4b share CodexE4Params, E5
// and E6 return CodexE5Params and CodexE6Params(). Flat eras fail with ErrCodexEra.
func CodexParamsFor(era CodexEra) (CodexParams, error) {
	switch era {
	case CodexE4, CodexE4b:
		return CodexE4Params(), nil
	case CodexE5:
		return CodexE5Params(), nil
	case CodexE6:
		return CodexE6Params(), nil
	}
	return CodexParams{}, fmt.Errorf("codex allocator parameters for era %q: %w", era, ErrCodexEra)
}

// Reserved is RESERVED, the bytes of the join counted against Max (len(Join)).
func (p CodexParams) Reserved() int { return len(p.Join) }

// RawNamespace is NS_RAW(server) (schemes.md §A.4): "mcp__" + server + "__" in E4, the server
// key in E5/E6.
func (p CodexParams) RawNamespace(server string) string {
	if p.LegacyNamespace {
		return Prefix + server + CodexDelimiter
	}
	return server
}

// NamespaceID is NS_ID (schemes.md §A.3): server NUL raw_callable_namespace NUL connector_id,
// with the connector id always empty (codex_apps is out of scope). It is the hash input of a
// namespace collision suffix.
func (p CodexParams) NamespaceID(server string) string {
	return server + "\x00" + p.RawNamespace(server) + "\x00"
}

// ToolID is TOOL_ID (schemes.md §A.3): NS_ID NUL raw_callable_name NUL raw_mcp_tool_name, both
// names being t.Tool for an ordinary server. It is the sort key and the hash input of tool
// suffixes. For servers passing CodexServerNameValid, distinct tools have distinct ToolIDs.
func (p CodexParams) ToolID(t CodexTool) string {
	return p.NamespaceID(t.Server) + "\x00" + t.Tool + "\x00" + t.Tool
}

// ModelName is the model-visible string of n under these parameters: namespace + Join + name
// (E4: "mcp__srv__" + "tool"; E5/E6: "mcp__srv" + "__" + "tool"). The Responses API limit
// applies to it.
func (p CodexParams) ModelName(n CodexName) string { return n.Namespace + p.Join + n.Name }

func (p CodexParams) prefixed(server string) bool {
	return p.AddPrefix && !slices.Contains(p.NonPrefixedServers, server)
}

// CodexName is what the allocator gives one tool: the Responses API namespace and the function
// name inside it, as a function_call stores them (namespace / name fields, E4b on). Display in
// Codex (ToolName, codex-rs/protocol/src/tool_name.rs) is Namespace + Name.
type CodexName struct {
	Namespace string
	Name      string
}

// Concat is Namespace + Name: Codex's Display form, the E4 model string, and the key the
// allocator keeps unique (unique_callable_parts).
func (n CodexName) Concat() string { return n.Namespace + n.Name }

// Joined is Namespace + "__" + Name, the E5/E6 model-visible string. The allocator keeps
// Concat unique, not Joined: server "a" tool "b__c" and server "a__b" tool "c" both join to
// "mcp__a__b__c" (their namespaces still differ).
func (n CodexName) Joined() string { return n.Namespace + CodexDelimiter + n.Name }

// Flat is ToolName::canonical_flat_name (codex-rs/protocol/src/tool_name.rs; schemes.md §A.4
// notes), used where a boundary cannot carry a namespace (hooks, code mode, non-Responses
// wires): every trailing '_' of the namespace and every leading '_' of the name is trimmed,
// then the two are joined with "__". E4 "mcp__fs__" + "read_file" and E5 "mcp__fs" + "read_file"
// both give "mcp__fs__read_file"; "mcp__lit" + "____" gives "mcp__lit__". Flat names of
// distinct tools can collide. In E5/E6 Flat is never longer than the joined model string; in E4
// a namespace cut by the allocator has lost its trailing "__", so Flat can be one byte longer
// than the model string (schemes.md §A.5 #18: 65 bytes).
func (n CodexName) Flat() string {
	return strings.TrimRight(n.Namespace, "_") + CodexDelimiter + strings.TrimLeft(n.Name, "_")
}

// codexCandidate is one tool on its way through the allocator.
type codexCandidate struct {
	tool   CodexTool
	nsID   string
	toolID string
	ns     string
	name   string
}

// CodexAllocate gives every tool of a session's whole MCP tool set its (namespace, name), as
// Codex's E4/E5/E6 allocator does (schemes.md §A.4; normalize_tools_for_model_with_prefix in
// codex-rs/codex-mcp/src/tools.rs, qualify_tools in codex-rs/codex-mcp/src/mcp_tool_names.rs):
//
//  1. exact duplicate identities are skipped; namespace = CodexSanitize(RawNamespace(server)),
//     prefixed with "mcp__" when p says so; name = CodexSanitize(tool);
//  2. every member of a namespace shared by several NS_IDs gets the SUFFIX of its own NS_ID
//     (before the trailing "__" in E4, appended in E5/E6);
//  3. every member of a (namespace, name) shared by several TOOL_IDs gets name + SUFFIX(TOOL_ID);
//  4. in TOOL_ID byte order, a name is kept if namespace+Join+name fits Max and its Concat is
//     unused; otherwise the name is cut to make room for SUFFIX(TOOL_ID) (or, when the namespace
//     alone is too long, the namespace is cut and the name is the suffix), retrying with
//     SUFFIX(TOOL_ID NUL attempt) until the Concat is unused.
//
// The result maps each distinct input tool to its name; it does not depend on input order.
// Every ModelName is ASCII [A-Za-z0-9_] and at most p.Max bytes when p.Max leaves room for a
// suffix (Max >= 14 + Reserved). The name of a tool depends on the whole set: never derive it
// from (server, tool) alone, and never parse it back.
func CodexAllocate(tools []CodexTool, p CodexParams) map[CodexTool]CodexName {
	seen := make(map[string]bool, len(tools))
	cands := make([]*codexCandidate, 0, len(tools))
	for _, t := range tools {
		toolID := p.ToolID(t)
		if seen[toolID] {
			continue
		}
		seen[toolID] = true
		ns := CodexSanitize(p.RawNamespace(t.Server))
		if p.prefixed(t.Server) && !strings.HasPrefix(ns, Prefix) {
			ns = Prefix + ns
		}
		cands = append(cands, &codexCandidate{tool: t, nsID: p.NamespaceID(t.Server), toolID: toolID,
			ns: ns, name: CodexSanitize(t.Tool)})
	}

	nsIDs := make(map[string]map[string]bool)
	for _, c := range cands {
		addToSet(nsIDs, c.ns, c.nsID)
	}
	for _, c := range cands {
		if len(nsIDs[c.ns]) > 1 {
			c.ns = codexNamespaceWithSuffix(c.ns, c.nsID)
		}
	}

	toolIDs := make(map[CodexName]map[string]bool)
	for _, c := range cands {
		addToSet(toolIDs, CodexName{c.ns, c.name}, c.toolID)
	}
	for _, c := range cands {
		if len(toolIDs[CodexName{c.ns, c.name}]) > 1 {
			c.name += codexSuffix(c.toolID)
		}
	}

	slices.SortFunc(cands, func(a, b *codexCandidate) int { return strings.Compare(a.toolID, b.toolID) })

	used := make(map[string]bool, len(cands))
	out := make(map[CodexTool]CodexName, len(cands))
	for _, c := range cands {
		out[c.tool] = p.uniqueParts(c.ns, c.name, c.toolID, used)
	}
	return out
}

// uniqueParts is unique_callable_parts: keep (ns, name) when it fits and is unused, otherwise
// hash with TOOL_ID, then TOOL_ID NUL 1, NUL 2, … until the concatenation is unused.
func (p CodexParams) uniqueParts(ns, name, toolID string, used map[string]bool) CodexName {
	if n := (CodexName{ns, name}); len(n.Concat())+p.Reserved() <= p.Max && !used[n.Concat()] {
		used[n.Concat()] = true
		return n
	}
	for attempt := 0; ; attempt++ {
		in := toolID
		if attempt > 0 {
			in = fmt.Sprintf("%s\x00%d", toolID, attempt)
		}
		n := p.fitWithSuffix(ns, name, codexSuffix(in))
		if !used[n.Concat()] {
			used[n.Concat()] = true
			return n
		}
	}
}

// fitWithSuffix is fit_callable_parts_with_hash: cut the name so name+suffix fills what the
// namespace and join leave of Max; when fewer than 13 bytes are left, cut the namespace to
// Max-13-Reserved and use the suffix alone as the name. Inputs are ASCII, so byte and char
// counts agree.
func (p CodexParams) fitWithSuffix(ns, name, suffix string) CodexName {
	room := max(p.Max-(len(ns)+p.Reserved()), 0)
	if room >= len(suffix) {
		return CodexName{ns, truncateASCII(name, room-len(suffix)) + suffix}
	}
	return CodexName{truncateASCII(ns, max(p.Max-(len(suffix)+p.Reserved()), 0)), suffix}
}

// codexNamespaceWithSuffix is append_namespace_hash_suffix: "mcp__srv__" → "mcp__srv_<hex>__"
// (E4 shape), "mcp__srv" → "mcp__srv_<hex>" (E5/E6).
func codexNamespaceWithSuffix(ns, nsID string) string {
	if base, ok := strings.CutSuffix(ns, CodexDelimiter); ok {
		return base + codexSuffix(nsID) + CodexDelimiter
	}
	return ns + codexSuffix(nsID)
}

func truncateASCII(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

func addToSet[K comparable](m map[K]map[string]bool, k K, v string) {
	if m[k] == nil {
		m[k] = make(map[string]bool)
	}
	m[k][v] = true
}
